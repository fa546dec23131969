#include "unit/netdev/netns.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"

extern char** environ;

namespace railwatch::testing {
namespace {

std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = getenv("PATH");
  std::string dirs = absl::StrCat(path != nullptr ? path : "", ":/usr/sbin:/sbin:/usr/bin:/bin");
  for (absl::string_view dir : absl::StrSplit(dirs, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

int64_t RealtimeNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

absl::StatusOr<std::string> RunProgram(const std::vector<std::string>& argv) {
  const std::string command = absl::StrJoin(argv, " ");
  const std::string program = FindProgram(argv.at(0));
  if (program.empty()) {
    return absl::NotFoundError(
        absl::StrCat(argv[0], " is not installed (scripts/install-deps installs it)"));
  }
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return absl::InternalError("pipe");
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return absl::InternalError("pipe");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  const int spawn_error =
      posix_spawn(&pid, program.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  std::string stdout_text, stderr_text;
  if (spawn_error == 0) {
    // Both pipes at once, so that a chatty stderr cannot block the child.
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&stdout_text, &stderr_text};
    int open_fds = 2;
    while (open_fds > 0) {
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        char buf[4096];
        ssize_t n = read(fds[i].fd, buf, sizeof(buf));
        if (n > 0) {
          sinks[i]->append(buf, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          fds[i].fd = -1;
          --open_fds;
        }
      }
    }
  }
  close(out[0]);
  close(err[0]);
  if (spawn_error != 0) {
    return absl::InternalError(absl::StrCat(command, ": ", std::strerror(spawn_error)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat(command, " failed (status ", status, "): ", stderr_text));
  }
  return stdout_text;
}

absl::StatusOr<std::unique_ptr<TestNetns>> TestNetns::Create() {
  static std::atomic<int> counter{0};
  // Namespaces of test processes that died before their destructors ran.
  if (absl::StatusOr<std::string> list = RunProgram({"ip", "netns", "list"}); list.ok()) {
    for (absl::string_view line : absl::StrSplit(*list, '\n', absl::SkipEmpty())) {
      absl::string_view name = line.substr(0, line.find(' '));
      std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
      int pid;
      if (parts.size() == 3 && parts[0] == "rwtest" && absl::SimpleAtoi(parts[1], &pid) &&
          pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH) {
        (void)RunProgram({"ip", "netns", "del", std::string(name)});
      }
    }
  }
  std::string name = absl::StrCat("rwtest-", getpid(), "-", counter++);
  if (absl::StatusOr<std::string> r = RunProgram({"ip", "netns", "add", name}); !r.ok()) {
    return r.status();
  }
  std::unique_ptr<TestNetns> netns(new TestNetns(name));
  // Without IPv6 no router solicitation or DAD frame moves a counter behind the test's back.
  // Kernels built without IPv6 have no such files, and nothing to silence.
  (void)netns->Exec({"sh", "-c",
                     "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6 && "
                     "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6"});
  return netns;
}

TestNetns::~TestNetns() {
  if (absl::StatusOr<std::string> r = RunProgram({"ip", "netns", "del", name_}); !r.ok()) {
    fprintf(stderr, "cannot delete network namespace %s: %s\n", name_.c_str(),
            std::string(r.status().message()).c_str());
  }
}

absl::Status TestNetns::Ip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"ip", "-n", name_};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv).status();
}

absl::StatusOr<std::string> TestNetns::Exec(const std::vector<std::string>& argv) const {
  std::vector<std::string> full = {"ip", "netns", "exec", name_};
  full.insert(full.end(), argv.begin(), argv.end());
  return RunProgram(full);
}

namespace {

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status EnterNetns(const std::string& netns) {
  const std::string path = absl::StrCat("/run/netns/", netns);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(path);
  const int rc = setns(fd, CLONE_NEWNET);
  close(fd);
  if (rc != 0) return Errno("setns(CLONE_NEWNET)");
  // sysfs shows the network namespace of whoever mounted it: mount one for this namespace,
  // in a mount namespace of this thread's own so the process's /sys stays as it was.
  if (unshare(CLONE_NEWNS) != 0) return Errno("unshare(CLONE_NEWNS)");
  if (mount("", "/", "none", MS_SLAVE | MS_REC, nullptr) != 0) return Errno("make / slave");
  umount2("/sys", MNT_DETACH);
  if (mount(netns.c_str(), "/sys", "sysfs", 0, nullptr) != 0) return Errno("mount sysfs");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<NetnsThread>> NetnsThread::Start(const std::string& netns) {
  std::unique_ptr<NetnsThread> t(new NetnsThread());
  t->thread_ = std::thread(&NetnsThread::Loop, t.get(), netns);
  absl::MutexLock lock(&t->mu_);
  t->mu_.Await(absl::Condition(&t->entered_));
  if (!t->enter_status_.ok()) return t->enter_status_;  // the destructor joins the thread
  return t;
}

NetnsThread::~NetnsThread() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void NetnsThread::Run(std::function<void()> fn) {
  absl::Notification done;
  {
    absl::MutexLock lock(&mu_);
    tasks_.push_back([&] {
      fn();
      done.Notify();
    });
  }
  done.WaitForNotification();
}

void NetnsThread::Loop(std::string netns) {
  absl::Status status = EnterNetns(netns);
  {
    absl::MutexLock lock(&mu_);
    enter_status_ = status;
    entered_ = true;
    if (!status.ok()) return;
  }
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &NetnsThread::HasWorkOrStop));
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace railwatch::testing
