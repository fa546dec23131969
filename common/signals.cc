#include "common/signals.h"

#include <pthread.h>
#include <signal.h>

#include <thread>

namespace railwatch {

void NotifyOnTerminationSignal(absl::Notification& stop) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, &stop] {
    int sig = 0;
    sigwait(&set, &sig);
    stop.Notify();
  }).detach();
}

}  // namespace railwatch
