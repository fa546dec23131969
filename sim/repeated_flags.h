#pragma once

#include <string>
#include <vector>

namespace railwatch::sim {

// absl keeps only the last value of a flag given twice, but the simulator's fault flags are
// lists that people repeat (--flap=a@8s --flap=a@16s, --job=... --job=...). Returns argv with
// every occurrence of the named flags (--name=V, -name=V, --name V) joined into one
// "--name=V1,V2" at the place of the first; other arguments keep their order, and everything
// after "--" is left alone.
std::vector<std::string> JoinRepeatedFlags(int argc, char** argv,
                                           const std::vector<std::string>& names);

}  // namespace railwatch::sim
