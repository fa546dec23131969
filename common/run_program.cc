#include "common/run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace railwatch {

void ResetSignalsForExec() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP}) sigaction(sig, &dfl, nullptr);
}

absl::StatusOr<ProgramOutput> RunProgram(const std::vector<std::string>& argv,
                                         absl::Duration timeout, size_t max_output) {
  if (argv.empty()) return absl::InvalidArgumentError("no program to run");
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Opened before fork: the child only calls async-signal-safe functions.
  const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t pid = fork();
  if (pid < 0) {
    const int fork_errno = errno;
    for (int fd : {out[0], out[1], err[0], err[1], null}) {
      if (fd >= 0) close(fd);
    }
    return absl::InternalError(absl::StrCat("fork: ", strerror(fork_errno)));
  }
  if (pid == 0) {
    // The program gets the default signal dispositions and an empty mask: the daemon and the
    // agent block SIGINT and SIGTERM for their signal thread (common/signals.cc).
    ResetSignalsForExec();
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    if (null >= 0) dup2(null, STDIN_FILENO);
    execvp(args[0], args.data());
    _exit(127);
  }
  if (null >= 0) close(null);
  close(out[1]);
  close(err[1]);
  ProgramOutput result;
  const absl::Time deadline = absl::Now() + timeout;
  bool timed_out = false;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left <= 0) {
      timed_out = true;
      break;
    }
    const int n = poll(fds, 2, static_cast<int>(left));
    if (n <= 0) continue;  // EINTR or the deadline: the loop looks again
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[16384];
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        const size_t room = max_output - std::min(max_output, sinks[i]->size());
        if (static_cast<size_t>(got) > room) result.truncated = true;
        sinks[i]->append(buf, std::min(static_cast<size_t>(got), room));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  // A program that closed its outputs may still run: it has until the deadline to exit.
  int status = 0;
  while (true) {
    if (timed_out) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (absl::Now() >= deadline) {
      timed_out = true;
      continue;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(
        absl::StrJoin(argv, " "), " did not finish within ", absl::FormatDuration(timeout)));
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
    if (result.exit_code == 127) {
      return absl::NotFoundError(absl::StrCat(argv[0], " not found or cannot run (exit 127)"));
    }
  } else if (WIFSIGNALED(status)) {
    result.exit_code = -1;
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace railwatch
