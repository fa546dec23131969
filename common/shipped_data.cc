#include "common/shipped_data.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace railwatch {
namespace fs = std::filesystem;

namespace {

// Where a shipped file lives in the repository: as installed, except the baseline script
// (installed as share/railwatch/baseline/, kept in sim/baseline/ beside the simulator).
std::string SourcePath(std::string_view path) {
  if (path.starts_with("baseline/")) return "sim/" + std::string(path);
  return std::string(path);
}

std::vector<std::string> ShareRoots() {
  std::vector<std::string> roots;
  if (const char* env = std::getenv("RAILWATCH_SHARE_DIR"); env != nullptr && *env != '\0') {
    roots.emplace_back(env);
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && self.has_parent_path()) {
    roots.push_back((self.parent_path().parent_path() / "share" / "railwatch").string());
  }
  roots.emplace_back(RAILWATCH_INSTALLED_SHARE_DIR);
  return roots;
}

}  // namespace

std::string FindShippedPath(std::string_view path, const std::vector<std::string>& share_roots,
                            const std::string& source_root, const std::string& fallback) {
  std::error_code ec;
  for (const std::string& root : share_roots) {
    const fs::path candidate = fs::path(root) / path;
    if (fs::exists(candidate, ec)) return candidate.lexically_normal().string();
  }
  if (!source_root.empty()) {
    const fs::path candidate = fs::path(source_root) / SourcePath(path);
    if (fs::exists(candidate, ec)) return candidate.lexically_normal().string();
  }
  return fallback;
}

std::vector<std::string> ShippedPathCandidates(std::string_view path) {
  std::vector<std::string> out;
  for (const std::string& root : ShareRoots()) {
    out.push_back((fs::path(root) / path).lexically_normal().string());
  }
  out.push_back((fs::path(RAILWATCH_BUILD_SOURCE_DIR) / SourcePath(path)).string());
  return out;
}

std::string ShippedPath(std::string_view path) {
  const std::string installed = (fs::path(RAILWATCH_INSTALLED_SHARE_DIR) / path).string();
  return FindShippedPath(path, ShareRoots(), RAILWATCH_BUILD_SOURCE_DIR, installed);
}

}  // namespace railwatch
