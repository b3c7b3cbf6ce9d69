// Test helpers for the server tests: free loopback ports, tensorflux-server child processes
// (started with posix_spawn, stderr to a file, waited for until they log their address), and
// temporary files.
#pragma once

#include <gtest/gtest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace tensorflux {
namespace server_test {

inline std::string ReadFileText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string TempPath(const std::string& name) {
  static int counter = 0;
  return (std::filesystem::path(::testing::TempDir()) /
          (name + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++)))
      .string();
}

inline std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// A port that was free a moment ago (the OS picks it; the socket is closed again).
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// One tensorflux-server process.
class ServerProcess {
 public:
  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }

  // Starts build/bin/tensorflux-server ARGS with `env` ("NAME=value") added to the environment.
  void Start(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    log_path_ = TempPath("server_log");
    std::vector<std::string> argv_s = {std::string(TX_BIN_DIR) + "/tensorflux-server"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e != nullptr; ++e) env_s.emplace_back(*e);
    env_s.insert(env_s.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (std::string& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
  }

  // Waits until the log says "listening on" (true) or the process exits / `ms` pass (false).
  bool WaitListening(int ms = 30000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (log().find("listening on") != std::string::npos) return true;
      int status;
      if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_status_ = status;
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  void Signal(int sig) {
    if (pid_ > 0) kill(pid_, sig);
  }

  // SIGSTOP, then waits until every thread of the process is stopped (true; false after `ms`).
  // kill() returns before that: the kernel wakes one thread, which then stops the others, and
  // on a loaded machine the others went on serving calls meanwhile (a step through a "stopped"
  // task answered in 6 ms: ClusterFaultTest.AStoppedTaskFailsCallsAtTheirDeadline).
  bool Pause(int ms = 30000) {
    Signal(SIGSTOP);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (AllThreadsStopped()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  // Waits for the process to end; its exit code (-signal when killed by one).
  int Wait() {
    if (pid_ > 0) {
      int status = 0;
      waitpid(pid_, &status, 0);
      exit_status_ = status;
      pid_ = -1;
    }
    if (WIFEXITED(exit_status_)) return WEXITSTATUS(exit_status_);
    if (WIFSIGNALED(exit_status_)) return -WTERMSIG(exit_status_);
    return -1000;
  }

  std::string log() const { return ReadFileText(log_path_); }
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

 private:
  // Every /proc/<pid>/task/<tid>/stat in state T (stopped); the state follows the ")" that
  // ends the thread's name.
  bool AllThreadsStopped() const {
    if (pid_ <= 0) return false;
    std::error_code ec;
    int threads = 0;
    for (const auto& t : std::filesystem::directory_iterator(
             "/proc/" + std::to_string(pid_) + "/task", ec)) {
      const std::string stat = ReadFileText((t.path() / "stat").string());
      const size_t close = stat.rfind(')');
      if (close == std::string::npos || close + 2 >= stat.size()) return false;
      if (stat[close + 2] != 'T') return false;
      ++threads;
    }
    return !ec && threads > 0;
  }

  pid_t pid_ = -1;
  int exit_status_ = 0;
  std::string log_path_;
};

}  // namespace server_test
}  // namespace tensorflux
