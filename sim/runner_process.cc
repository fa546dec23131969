#include "sim/runner_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <deque>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/run_program.h"

namespace railwatch::sim {

namespace {

// A path as it is; a bare name searched in $PATH; "" when there is no such executable.
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<Child>> Child::Start(std::string name,
                                                    const std::vector<std::string>& argv,
                                                    const std::string& log_path) {
  if (argv.empty()) return absl::InvalidArgumentError("no program to start");
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls
  // (so no execvp: the program is looked up in $PATH here).
  const std::string program = FindProgram(argv[0]);
  if (program.empty()) {
    return absl::NotFoundError(absl::StrCat("cannot start ", name, ": no program ", argv[0]));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    return absl::InternalError(absl::StrCat("cannot write ", log_path, ": ", strerror(errno)));
  }
  const int null_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(log);
    if (null_in >= 0) close(null_in);
    return absl::InternalError(absl::StrCat("cannot start ", name, ": fork: ", strerror(err)));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);  // the runner died before prctl
    ResetSignalsForExec();
    if (null_in >= 0) dup2(null_in, 0);
    dup2(log, 1);
    dup2(log, 2);
    execv(program.c_str(), args.data());
    const char msg[] = "railwatch-sim run: exec failed\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  setpgid(pid, pid);  // also here: no race with a kill of the group right after
  close(log);
  if (null_in >= 0) close(null_in);
  return std::unique_ptr<Child>(new Child(std::move(name), pid, log_path));
}

Child::~Child() {
  if (!reaped_) StopAll({this}, absl::ZeroDuration());
}

bool Child::Running() {
  if (reaped_) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    reaped_ = true;
    status_ = status;
    return false;
  }
  return true;
}

std::string Child::ExitDescription() const {
  if (!reaped_) return "running";
  if (WIFEXITED(status_)) return absl::StrCat("exited with status ", WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return absl::StrCat("killed by signal ", WTERMSIG(status_));
  return "ended";
}

std::string Child::LogTail(int lines) const {
  std::ifstream in(log_path_);
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  std::string out;
  for (const std::string& line : tail) absl::StrAppend(&out, "    ", line, "\n");
  return out;
}

void StopAll(const std::vector<Child*>& children, absl::Duration grace) {
  for (Child* c : children) {
    if (c->Running()) kill(c->pid_, SIGTERM);
  }
  const absl::Time deadline = absl::Now() + grace;
  while (true) {
    bool running = false;
    for (Child* c : children) running = c->Running() || running;
    if (!running || absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  for (Child* c : children) {
    kill(-c->pid_, SIGKILL);  // the group: the child if it still runs, and anything it left
    if (!c->reaped_) {
      int status = 0;
      if (waitpid(c->pid_, &status, 0) == c->pid_) c->status_ = status;
      c->reaped_ = true;
    }
  }
}

}  // namespace railwatch::sim
