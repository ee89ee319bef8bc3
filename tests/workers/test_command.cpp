// run_captured: a helper command's answer, its failure said, its process group ended when it
// does not answer in time.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "lbo/workers/command.hpp"

using lbo::workers::run_captured;
using namespace std::chrono_literals;

TEST(RunCapturedTest, its_output_and_errors_are_captured_and_an_exit_status_is_said) {
  const auto ok = run_captured({"sh", "-c", "echo out; echo err >&2"}, 30s);
  EXPECT_EQ(ok.error, "");
  EXPECT_EQ(ok.output, "out\nerr\n");
  const auto failed = run_captured({"sh", "-c", "echo nope; exit 3"}, 30s);
  EXPECT_EQ(failed.error, "exited with status 3");
  EXPECT_EQ(failed.output, "nope\n");
  const auto killed = run_captured({"sh", "-c", "kill -SEGV $$"}, 30s);
  EXPECT_EQ(killed.error, "was killed by SIGSEGV");
  const auto missing = run_captured({"lbo-no-such-program"}, 30s);
  EXPECT_NE(missing.error.find("cannot start lbo-no-such-program: No such file or directory"), std::string::npos)
      << missing.error;
}

TEST(RunCapturedTest, a_command_that_does_not_answer_in_time_is_ended_with_what_it_started) {
  // The command's child keeps the output open after the command itself: both are in its group,
  // and neither is left when the answer comes back.
  const auto slow = run_captured({"sh", "-c", "sleep 61.25 & wait"}, 500ms);
  EXPECT_EQ(slow.error, "gave no answer within 500 ms");
  int left = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (text.find("61.25") != std::string::npos && text.find("sleep") != std::string::npos) ++left;
  }
  EXPECT_EQ(left, 0) << "the command's child outlived it";
}
