// Slurm hostlist expressions (jobs/slurm.h: ExpandHostlist).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jobs/slurm.h"
#include "jobs/slurm_internal.h"

namespace railwatch::jobs {
namespace {

// Numbers of up to 18 digits fit in uint64_t with room for hi - lo + 1.
constexpr size_t kMaxHostlistDigits = 18;

struct HostRange {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;  // digits of lo as written: its zero padding
};

// One part of a name: literal text, or a bracket group (its ranges).
struct NamePart {
  std::string literal;
  std::vector<HostRange> ranges;
};

struct HostName {
  std::vector<NamePart> parts;
  size_t column = 0;
};

bool IsHostlistSeparator(char c) {
  return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// n + m, or limit + 1 when it passes limit.
uint64_t AddCapped(uint64_t n, uint64_t m, uint64_t limit) {
  return (n > limit || m > limit - n) ? limit + 1 : n + m;
}

uint64_t MultiplyCapped(uint64_t n, uint64_t m, uint64_t limit) {
  if (n == 0 || m == 0) return 0;
  return (n > limit || m > limit / n) ? limit + 1 : n * m;
}

std::string Padded(uint64_t n, size_t width) {
  std::string digits = std::to_string(n);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

class HostlistReader {
 public:
  explicit HostlistReader(std::string_view expr) : expr_(expr) {}

  // Reads the whole expression into names_; false with error_ and error_column_ set.
  bool Read() {
    while (true) {
      while (at_ < expr_.size() && IsHostlistSeparator(expr_[at_])) ++at_;
      if (at_ >= expr_.size()) return true;
      HostName name;
      name.column = at_ + 1;
      while (at_ < expr_.size() && !IsHostlistSeparator(expr_[at_])) {
        const char c = expr_[at_];
        if (c == ']') return Fail(at_, "']' without '['");
        if (c == '[') {
          NamePart group;
          if (!ReadGroup(group)) return false;
          name.parts.push_back(std::move(group));
          continue;
        }
        if (name.parts.empty() || !name.parts.back().ranges.empty()) name.parts.emplace_back();
        name.parts.back().literal.push_back(c);
        ++at_;
      }
      names_.push_back(std::move(name));
    }
  }

  const std::vector<HostName>& names() const { return names_; }
  const std::string& error() const { return error_; }
  size_t error_column() const { return error_column_; }

 private:
  bool Fail(size_t offset, std::string why) {
    error_column_ = offset + 1;
    error_ = std::move(why);
    return false;
  }

  // A number at at_: its value and width; false (failed) when there is none or it is too long.
  bool ReadNumber(uint64_t& value, size_t& width) {
    const size_t start = at_;
    while (at_ < expr_.size() && IsDigit(expr_[at_])) ++at_;
    width = at_ - start;
    if (width == 0) {
      if (at_ >= expr_.size()) return Fail(at_, "the expression ends inside '[...]'");
      return Fail(
          at_, absl::StrCat("expected a number, found '", absl::string_view(&expr_[at_], 1), "'"));
    }
    if (width > kMaxHostlistDigits) {
      return Fail(start, absl::StrCat("a number of more than ", kMaxHostlistDigits, " digits"));
    }
    value = 0;
    for (size_t i = start; i < at_; ++i) value = value * 10 + static_cast<uint64_t>(expr_[i] - '0');
    return true;
  }

  // [a-b,c,...] at at_ (on the '[').
  bool ReadGroup(NamePart& group) {
    const size_t open = at_++;
    while (true) {
      const size_t range_start = at_;
      if (at_ < expr_.size() && expr_[at_] == '[') return Fail(at_, "'[' inside '[...]'");
      HostRange range;
      if (!ReadNumber(range.lo, range.width)) return false;
      range.hi = range.lo;
      if (at_ < expr_.size() && expr_[at_] == '-') {
        ++at_;
        size_t hi_width = 0;
        if (!ReadNumber(range.hi, hi_width)) return false;
        if (range.hi < range.lo) {
          return Fail(range_start,
                      absl::StrCat("the range ", range.lo, "-", range.hi, " goes down"));
        }
      }
      group.ranges.push_back(range);
      if (at_ >= expr_.size()) return Fail(open, "'[' without ']'");
      const char c = expr_[at_];
      if (c == ',') {
        ++at_;
        continue;
      }
      if (c == ']') {
        ++at_;
        return true;
      }
      if (c == '[') return Fail(at_, "'[' inside '[...]'");
      return Fail(at_, absl::StrCat("unexpected '", absl::string_view(&expr_[at_], 1),
                                    "' in '[...]' (ranges are a-b, joined by ',')"));
    }
  }

  std::string_view expr_;
  size_t at_ = 0;
  std::vector<HostName> names_;
  std::string error_;
  size_t error_column_ = 0;
};

uint64_t NamesOf(const HostName& name, uint64_t limit) {
  uint64_t product = 1;
  for (const NamePart& part : name.parts) {
    if (part.ranges.empty()) continue;
    uint64_t in_group = 0;
    for (const HostRange& r : part.ranges) in_group = AddCapped(in_group, r.hi - r.lo + 1, limit);
    product = MultiplyCapped(product, in_group, limit);
  }
  return product;
}

void ExpandName(const HostName& name, size_t part, std::string& prefix,
                std::vector<std::string>& out) {
  if (part == name.parts.size()) {
    out.push_back(prefix);
    return;
  }
  const NamePart& p = name.parts[part];
  const size_t keep = prefix.size();
  if (p.ranges.empty()) {
    prefix += p.literal;
    ExpandName(name, part + 1, prefix, out);
  } else {
    for (const HostRange& r : p.ranges) {
      for (uint64_t n = r.lo;; ++n) {
        prefix += Padded(n, r.width);
        ExpandName(name, part + 1, prefix, out);
        prefix.resize(keep);
        if (n == r.hi) break;
      }
    }
  }
  prefix.resize(keep);
}

}  // namespace

namespace internal {

absl::StatusOr<std::vector<std::string>> ExpandHostlistAt(std::string_view expr, size_t max_names,
                                                          size_t* error_column) {
  HostlistReader reader(expr);
  if (!reader.Read()) {
    *error_column = reader.error_column();
    return absl::InvalidArgumentError(reader.error());
  }
  uint64_t total = 0;
  for (const HostName& name : reader.names()) {
    total = AddCapped(total, NamesOf(name, max_names), max_names);
    if (total > max_names) {
      *error_column = name.column;
      return absl::InvalidArgumentError(
          absl::StrCat("the hostlist expands to more than ", max_names, " names"));
    }
  }
  std::vector<std::string> out;
  out.reserve(total);
  std::string prefix;
  for (const HostName& name : reader.names()) ExpandName(name, 0, prefix, out);
  return out;
}

}  // namespace internal

absl::StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view expr, size_t max_names) {
  size_t column = 0;
  absl::StatusOr<std::vector<std::string>> names =
      internal::ExpandHostlistAt(expr, max_names, &column);
  if (!names.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("column ", column, ": ", names.status().message()));
  }
  return names;
}

}  // namespace railwatch::jobs
