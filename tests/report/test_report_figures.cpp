// The report's utilization and transfer figures against values computed by hand, on run
// directories whose journals are written record by record with known times and results.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "lbo/orchestrator/files.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/report/run_data.hpp"
#include "test_support.hpp"
#include "transfer.hpp"

using nlohmann::json;
using namespace lbo::orchestrator;

namespace {

// A run folder "r" under `root` whose journal holds `records` after a RunStarted of `job`.
class HandMadeRun {
 public:
  HandMadeRun(const std::filesystem::path& root, const std::string& job_text)
      : job_(lbo::testing::job_from(job_text, root)), dir_(root / "r"), paths_(dir_) {
    std::filesystem::create_directories(paths_.trials());
    lbo::orchestrator::write_file_atomically(paths_.job_file(), job_text, Durability::cached);
    writer_.emplace(JournalWriter::create(paths_.journal()));
  }

  const std::filesystem::path& dir() const { return dir_; }

  void allocation(double t, int slots) { append(RunStarted{"test", t, slots, JobIdentity::of(job_)}); }
  void start(std::int64_t trial, int attempt, double t, int slot) {
    append(TrialStarted{trial, 0, attempt, config(trial), "local:" + std::to_string(slot), t, ProposalSource::initial, ""});
  }
  void finish(std::int64_t trial, int attempt, double t, int slot, lbo::workers::TrialStatus status, double value = 0) {
    lbo::workers::Outcome o;
    o.status = status;
    o.objective = value;
    if (status != lbo::workers::TrialStatus::ok) o.reason = "test";
    const bool final = status != lbo::workers::TrialStatus::cancelled;
    append(TrialFinished{trial, attempt, final, o, "local:" + std::to_string(slot), t, 0, config(trial),
                         ProposalSource::initial, ""});
  }

 private:
  static lbo::jobs::Config config(std::int64_t trial) { return lbo::jobs::Config{{0.1 * static_cast<double>(trial % 10)}}; }
  void append(const JournalRecord& r) {
    writer_->append(r);
    writer_->sync();
  }

  lbo::jobs::JobSpec job_;
  std::filesystem::path dir_;
  RunPaths paths_;
  std::optional<JournalWriter> writer_;
};

std::string job_text(const std::string& direction, int budget) {
  return "name = \"r\"\n[objective]\ncommand = [\"true\"]\ndirection = \"" + direction +
         "\"\n[policy]\nsurrogate = \"random\"\n[space]\nx = { type = \"float\", low = 0, high = 1 }\n[[tasks]]\nname = \"a\"\n"
         "budget = " + std::to_string(budget) + "\n";
}

}  // namespace

// Issue 31: a run that kept its slots busy read "61.2%" after a no-op `lbo run` on the finished
// run, because each allocation lasted until the next one started. Two slots: the first
// allocation runs 30 s (a stop cancels trial 2), the resume 40 s, and a third start finds nothing
// to do.
TEST(ReportFiguresTest, utilization_counts_each_allocation_to_its_last_record) {
  lbo::testing::ScratchDir scratch;
  using S = lbo::workers::TrialStatus;
  {
    HandMadeRun run(scratch.path(), job_text("maximize", 4));
    run.allocation(1000, 2);
    run.start(0, 1, 1000, 0);
    run.start(1, 1, 1000, 1);
    run.finish(0, 1, 1010, 0, S::ok, 1.0);
    run.start(2, 1, 1010, 0);
    run.finish(1, 1, 1020, 1, S::ok, 3.0);
    run.finish(2, 1, 1030, 0, S::cancelled);  // the stop
    run.allocation(5000, 2);
    run.start(2, 2, 5000, 0);
    run.start(3, 1, 5000, 1);
    run.finish(2, 2, 5010, 0, S::ok, 2.0);
    run.finish(3, 1, 5040, 1, S::ok, 5.0);
    run.allocation(9000, 2);  // the no-op resume
  }
  const json data = lbo::report::run_data(scratch.path() / "r");
  // By hand: busy 10 + 20 + 20 in the first allocation, 10 + 40 in the second; slot time
  // 2 × 30 + 2 × 40 + 2 × 0.
  const json& u = data["utilization"];
  EXPECT_DOUBLE_EQ(u["busy"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(u["available"].get<double>(), 140);
  EXPECT_DOUBLE_EQ(u["share"].get<double>(), 100.0 / 140);
  EXPECT_DOUBLE_EQ(u["wall"].get<double>(), 70);
  ASSERT_EQ(u["ranks"].size(), 1u);
  EXPECT_EQ(u["ranks"][0]["rank"], "local");
  EXPECT_EQ(u["ranks"][0]["slots"], 2);
  EXPECT_DOUBLE_EQ(u["ranks"][0]["available"].get<double>(), 140);
  ASSERT_EQ(data["allocations"].size(), 3u);
  EXPECT_DOUBLE_EQ(data["allocations"][0]["ended"].get<double>(), 1030);
  EXPECT_DOUBLE_EQ(data["allocations"][1]["ended"].get<double>(), 5040);
  EXPECT_DOUBLE_EQ(data["allocations"][2]["ended"].get<double>(), 9000);
  EXPECT_DOUBLE_EQ(data["allocations"][0]["busy"].get<double>(), 50);
  EXPECT_DOUBLE_EQ(data["allocations"][2]["busy"].get<double>(), 0);
}

// Issue 31: "trials to 95%" counted from each task's own first result, so a run whose first
// trial was already near the best (transfer working) looked worst. Two runs of task "a"
// (maximize): "warm" starts at 9 and reaches 10 at its third trial; "cold" climbs 1, 2, 4, 6.
TEST(ReportFiguresTest, the_transfer_figure_credits_a_good_start_against_a_common_target) {
  const auto run = [](const std::string& name, const std::vector<double>& values) {
    json r{{"name", name}, {"job", {{"direction", "maximize"}, {"tasks", {{{"name", "a"}}}}}}, {"trials", json::array()}};
    for (std::size_t i = 0; i < values.size(); ++i) {
      json t{{"id", i}, {"task", 0}, {"status", std::isnan(values[i]) ? "failed" : "ok"}};
      if (!std::isnan(values[i])) t["objective"] = values[i];
      r["trials"].push_back(t);
    }
    return r;
  };
  const double failed = std::nan("");
  const json runs = json::array({run("warm", {9, 9.5, 10, 10}), run("cold", {failed, 1, 2, 4, 6})});
  const json t = lbo::report::transfer_json(runs);
  ASSERT_EQ(t["tasks"].size(), 1u);
  const json& a = t["tasks"][0];
  // Pooled successes 9, 9.5, 10, 10, 1, 2, 4, 6: best 10, median (6 + 9) / 2 = 7.5, so the gap
  // is 2.5 and the target 10 − 0.05 × 2.5 = 9.875.
  EXPECT_DOUBLE_EQ(a["best"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(a["typical"].get<double>(), 7.5);
  EXPECT_DOUBLE_EQ(a["target"].get<double>(), 9.875);
  EXPECT_EQ(a["compared"], 4);
  // warm: regrets (10 − 9) / 2.5 = 0.4, 0.2, 0, 0: the target at trial 3, mean 0.15.
  EXPECT_EQ(a["runs"][0]["trials_to_target"], 3);
  EXPECT_DOUBLE_EQ(a["runs"][0]["mean_regret"].get<double>(), 0.15);
  EXPECT_DOUBLE_EQ(a["runs"][0]["first_regret"].get<double>(), 0.4);
  // cold: 1 (no success yet), then clipped 1, 1, 1: never reached, mean 1 over its first 4.
  EXPECT_TRUE(a["runs"][1]["trials_to_target"].is_null());
  EXPECT_DOUBLE_EQ(a["runs"][1]["mean_regret"].get<double>(), 1);
  EXPECT_EQ(a["runs"][1]["finished"], 5);

  // Minimization reads the same, with the signs turned.
  json minimize = runs;
  for (json& r : minimize) {
    r["job"]["direction"] = "minimize";
    for (json& tr : r["trials"]) {
      if (tr.contains("objective")) tr["objective"] = -tr["objective"].get<double>();
    }
  }
  const json m = lbo::report::transfer_json(minimize)["tasks"][0];
  EXPECT_DOUBLE_EQ(m["best"].get<double>(), -10);
  EXPECT_DOUBLE_EQ(m["target"].get<double>(), -9.875);
  EXPECT_EQ(m["runs"][0]["trials_to_target"], 3);

  // A run of the other direction is left out, and said.
  json mixed = runs;
  mixed[1]["job"]["direction"] = "minimize";
  const json x = lbo::report::transfer_json(mixed);
  EXPECT_TRUE(x["tasks"][0]["runs"][1].is_null());
  EXPECT_DOUBLE_EQ(x["tasks"][0]["typical"].get<double>(), 9.75);  // median of 9, 9.5, 10, 10
  ASSERT_EQ(x["notes"].size(), 1u);
}

// The whole page carries the comparison: the report of one real run, stopped and resumed
// with nothing left to do, measures its tasks against its own results.
TEST(ReportFiguresTest, a_single_run_is_its_own_comparison) {
  lbo::testing::ScratchDir scratch;
  using S = lbo::workers::TrialStatus;
  {
    HandMadeRun run(scratch.path(), job_text("minimize", 3));
    run.allocation(1000, 1);
    run.start(0, 1, 1000, 0);
    run.finish(0, 1, 1001, 0, S::ok, 0.5);
    run.start(1, 1, 1001, 0);
    run.finish(1, 1, 1002, 0, S::ok, 0.75);
    run.start(2, 1, 1002, 0);
    run.finish(2, 1, 1003, 0, S::ok, 1.0);
    run.allocation(2000, 1);
  }
  const json runs = json::array({lbo::report::run_data(scratch.path() / "r")});
  const json a = lbo::report::transfer_json(runs)["tasks"][0];
  // Best 0.5 (minimize), median 0.75: the first trial is at the target.
  EXPECT_DOUBLE_EQ(a["best"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(a["typical"].get<double>(), 0.75);
  EXPECT_EQ(a["runs"][0]["trials_to_target"], 1);
  EXPECT_DOUBLE_EQ(a["runs"][0]["mean_regret"].get<double>(), 0);
}
