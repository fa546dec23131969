#include "logs/log_event.h"

namespace railwatch::logs {

void LogEvent::Set(std::string_view key, std::string value) {
  for (auto& [k, v] : fields) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  fields.emplace_back(std::string(key), std::move(value));
}

const std::string* LogEvent::Get(std::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string LogEvent::Value(std::string_view key) const {
  const std::string* v = Get(key);
  return v != nullptr ? *v : std::string();
}

}  // namespace railwatch::logs
