#include "support/ttar.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace railwatch::testing {
namespace fs = std::filesystem;

absl::Status UnpackTtar(const std::string& archive, const std::string& dest) {
  std::ifstream in(archive);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", archive));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  fs::path last_path;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    auto where = [&] { return absl::StrCat(archive, ":", i + 1); };
    if (absl::StartsWith(line, "Directory: ")) {
      fs::create_directories(fs::path(dest) / line.substr(11));
    } else if (absl::StartsWith(line, "Path: ")) {
      last_path = fs::path(dest) / line.substr(6);
      if (i + 1 >= lines.size()) return absl::InvalidArgumentError(where() + ": truncated");
      const std::string& next = lines[i + 1];
      if (absl::StartsWith(next, "SymlinkTo: ")) {
        fs::create_directories(last_path.parent_path());
        fs::create_symlink(next.substr(11), last_path);
        ++i;
        continue;
      }
      int n = 0;
      if (!absl::StartsWith(next, "Lines: ") || !absl::SimpleAtoi(next.substr(7), &n) ||
          i + 1 + n >= lines.size()) {
        return absl::InvalidArgumentError(where() + ": expected \"Lines: N\"");
      }
      std::string content;
      for (int k = 0; k < n; ++k) {
        std::string l = absl::StrReplaceAll(lines[i + 2 + k], {{"NULLBYTE", std::string(1, '\0')}});
        if (k == n - 1 && absl::EndsWith(l, "EOF")) {
          content += l.substr(0, l.size() - 3);
        } else {
          content += l + "\n";
        }
      }
      fs::create_directories(last_path.parent_path());
      std::ofstream out(last_path, std::ios::binary);
      out << content;
      i += 1 + n;
    }
    // "Mode:" lines and "# ttar" separators need nothing: the tests run as the file owner.
  }
  return absl::OkStatus();
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = absl::StrCat(base && *base ? base : "/tmp", "/railwatch-test-XXXXXX");
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) std::abort();
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string FixturePath(const std::string& name) {
  return absl::StrCat(RAILWATCH_FIXTURES_DIR, "/", name);
}

std::string ReadFixture(const std::string& name) {
  std::ifstream in(FixturePath(name), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace railwatch::testing
