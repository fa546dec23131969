#pragma once

// When the engine's active diagnoses are written to its state file (diagnosis_state.h has the
// file): at once after an evaluation that fired or resolved one, else every save interval while
// there is something new. A failing write is logged once per failing streak; the diagnoses go
// on without it.

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "engine/diagnosis_state.h"

namespace railwatch {

class StateSaver {
 public:
  // An empty `path` saves nothing.
  StateSaver(std::string path, absl::Duration interval)
      : path_(std::move(path)), interval_(interval) {}

  const std::string& path() const { return path_; }

  // `urgent`: one fired or resolved; `changed`: a pending one came or went; `empty`: no active
  // diagnosis. `snapshot` is called only when the file is written.
  void Save(bool urgent, bool changed, bool empty, int64_t now,
            absl::FunctionRef<EngineState()> snapshot);

  // After a restore: the next evaluation writes the file whatever it finds (an orphan resolved
  // at the restore must not come back at the next start).
  void WriteNextTime() {
    saved_empty_ = false;
    last_save_ = 0;
  }

 private:
  const std::string path_;
  const absl::Duration interval_;
  int64_t last_save_ = 0;
  bool saved_empty_ = true;  // the last save had no diagnosis
  bool failing_ = false;
};

}  // namespace railwatch
