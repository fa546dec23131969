#pragma once

// RAILWATCH_ASAN is 1 in a build with AddressSanitizer, whichever compiler made it: gcc defines
// __SANITIZE_ADDRESS__, clang answers __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define RAILWATCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RAILWATCH_ASAN 1
#endif
#endif
#ifndef RAILWATCH_ASAN
#define RAILWATCH_ASAN 0
#endif
