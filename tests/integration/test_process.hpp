// Child processes for integration tests: the built executables run as a user runs them.
#pragma once

#include <doctest/doctest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace coinfer::test {

struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;  // the read end of the child's stdout; stderr passes through
};

inline Child spawn_with_stdout(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  Child child;
  REQUIRE(posix_spawn(&child.pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  child.stdout_fd = fds[0];
  return child;
}

inline int exit_code(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

struct ProcessResult {
  int exit_code = -1;
  std::string out;
};

// Runs `program` with `args` to completion, capturing its stdout.
inline ProcessResult run_process(std::string program, const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  argv.reserve(args.size() + 1);
  argv.push_back(std::move(program));
  for (const auto& a : args) argv.push_back(a);
  const Child child = spawn_with_stdout(std::move(argv));
  ProcessResult result;
  char chunk[4096];
  for (ssize_t n; (n = read(child.stdout_fd, chunk, sizeof chunk)) > 0;) result.out.append(chunk, n);
  close(child.stdout_fd);
  int status = 0;
  waitpid(child.pid, &status, 0);
  result.exit_code = exit_code(status);
  return result;
}

}  // namespace coinfer::test
