// RunOutputs: what a run tells people as its records are committed.
#include "lbo/orchestrator/run_outputs.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "test_support.hpp"

using namespace lbo;
using namespace lbo::orchestrator;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Everything written to `file` (a tmpfile), which it closes.
std::string read_and_close(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) text.append(buffer, n);
  std::fclose(file);
  return text;
}

}  // namespace

// Two slots end a task's last two trials in one turn of the loop: both results are committed
// together and both see the budget spent, yet the task is done once.
TEST(RunOutputsTest, a_task_whose_last_trials_end_in_one_commit_is_said_done_once) {
  lbo::testing::ScratchDir dir;
  const jobs::JobSpec job =
      lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 2\n"), dir.path());
  RunState state = lbo::testing::started_state(job);
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  {
    Console console(log);
    RunOutputs outputs(RunPaths(dir.path()), job, console, {});
    std::mt19937_64 rng(1);
    const std::int64_t first = lbo::testing::start_trial(state, 0, job.space.sample(rng));
    const std::int64_t second = lbo::testing::start_trial(state, 0, job.space.sample(rng), "local:1");
    lbo::testing::end_attempt(state, first, lbo::testing::ok_with(0.25));
    lbo::testing::end_attempt(state, second, lbo::testing::ok_with(0.75));
    outputs.committed(state, {{first, 1}, {second, 1}});
  }
  const std::string text = read_and_close(log);
  EXPECT_EQ(count(text, "task a done: 2/2 ok, best 0.75 (trial 1)"), 1u) << text;
  EXPECT_EQ(count(lbo::testing::read_text(dir.path() / "results.csv"), "\n"), 3u);  // header and two rows
}

// Issue 56: a watched file named "x\n[12:00:00] done: ..." forged a log line of its own.
TEST(ConsoleTest, a_line_cannot_start_another_or_steer_the_terminal) {
  EXPECT_EQ(printable("plain text, ü"), "plain text, ü");
  EXPECT_EQ(printable("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(printable("\x1b[2Jred\x7f"), "\\x1b[2Jred\\x7f");
  EXPECT_EQ(printable(std::string("nul\0here", 8)), "nul\\x00here");
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  Console(log).log("watched file /in/x\n[12:00:00] done: 9 trials finished");
  const std::string text = read_and_close(log);
  EXPECT_EQ(count(text, "\n"), 1u) << text;
  EXPECT_NE(text.find("x\\n[12:00:00] done"), std::string::npos) << text;
}
