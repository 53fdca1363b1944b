#include "distributed/launcher.h"

#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace diffloco::distributed {

int freeLocalPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string e = std::strerror(errno);
    close(fd);
    throw std::runtime_error("could not find a free port on 127.0.0.1: " + e);
  }
  close(fd);
  return ntohs(a.sin_port);
}

namespace {

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "stopped";
}

int exitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// The environment of rank r: the parent's, with torchrun's variables replaced.
std::vector<std::string> rankEnvironment(int r, int n, int port) {
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"RANK", std::to_string(r)},       {"LOCAL_RANK", std::to_string(r)},
      {"WORLD_SIZE", std::to_string(n)}, {"LOCAL_WORLD_SIZE", std::to_string(n)},
      {"MASTER_ADDR", "127.0.0.1"},      {"MASTER_PORT", std::to_string(port)}};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    bool replaced = false;
    for (const auto& [k, v] : vars) replaced |= kv.rfind(k + "=", 0) == 0;
    if (!replaced) env.push_back(kv);
  }
  for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

int launchLocalRanks(int nproc, const std::string& program, const std::vector<std::string>& args,
                     double graceS) {
  if (nproc < 1) throw std::invalid_argument("--nproc: must be >= 1");
  const int port = freeLocalPort();
  const pid_t parent = getpid();
  std::vector<pid_t> pids(nproc, -1);
  // Ctrl-C reaches every child (one process group): they stop cleanly; the launcher waits.
  struct sigaction ignore {
  }, oldInt{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &oldInt);
  for (int r = 0; r < nproc; ++r) {
    // Everything the child needs is built before fork(): only async-signal-safe calls after it.
    std::vector<std::string> argStrings{program};
    argStrings.insert(argStrings.end(), args.begin(), args.end());
    std::vector<std::string> envStrings = rankEnvironment(r, nproc, port);
    std::vector<char*> argv = pointers(argStrings), envp = pointers(envStrings);
    const pid_t pid = fork();
    if (pid < 0) {
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGKILL);
      throw std::runtime_error(std::string("--nproc: fork failed: ") + std::strerror(errno));
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // the launcher's death ends the ranks
      if (getppid() != parent) _exit(1);
      signal(SIGINT, SIG_DFL);
      execve(program.c_str(), argv.data(), envp.data());
      _exit(127);
    }
    pids[r] = pid;
  }
  spdlog::info("launched {} ranks on 127.0.0.1:{}", nproc, port);

  int alive = nproc, result = 0;
  bool stopping = false;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (alive > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, stopping ? WNOHANG : 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pid == 0) {  // stopping, none exited yet
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : pids)
          if (p > 0) kill(p, SIGKILL);
        deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    int r = 0;
    while (r < nproc && pids[r] != pid) ++r;
    if (r == nproc) continue;
    pids[r] = -1;
    --alive;
    const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (failed && !stopping) {
      result = exitCode(status);
      stopping = true;
      spdlog::error("rank {} {}; stopping the other {} rank(s)", r, describeStatus(status), alive);
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGTERM);
      deadline = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(static_cast<long long>(graceS * 1000));
    }
  }
  sigaction(SIGINT, &oldInt, nullptr);
  return result;
}

}  // namespace diffloco::distributed
