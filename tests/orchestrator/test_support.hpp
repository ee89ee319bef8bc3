#pragma once
// Helpers shared by the orchestrator tests: a scratch folder and jobs built from text.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::testing {

/// A fresh folder named after the running test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("lbo-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline jobs::JobSpec job_from(const std::string& text, const std::filesystem::path& dir) {
  return jobs::parse_job(text, dir / "job.toml");
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// A job running the test objective (value = sum of the numeric parameters): `x` in [0, 1]
/// plus `extra_space`, the given tasks, random search unless `policy` says otherwise.
inline std::string test_job(const std::string& extra_space = "", const std::string& tasks =
                                                                      "[[tasks]]\nname = \"a\"\nbudget = 5\n",
                            const std::string& objective_extra = "", const std::string& policy = "surrogate = \"random\"") {
  return std::string("name = \"t\"\nseed = 3\n[objective]\ncommand = [\"") + LBO_TEST_OBJECTIVE +
         "\"]\ndirection = \"maximize\"\n" + objective_extra + "\n[policy]\n" + policy +
         "\n[space]\nx = { type = \"float\", low = 0, high = 1 }\n" + extra_space + "\n" + tasks;
}

/// A run state that has started `job`: its RunStarted record applied.
inline orchestrator::RunState started_state(const jobs::JobSpec& job) {
  orchestrator::RunState state;
  state.apply(orchestrator::RunStarted{"test", 0, 1, orchestrator::JobIdentity::of(job)});
  return state;
}

/// A new trial of `task` evaluating `config`, proposed by `source`, its first attempt started
/// on `worker`: its id.
inline std::int64_t start_trial(orchestrator::RunState& state, int task, jobs::Config config,
                                const std::string& worker = "local:0",
                                orchestrator::ProposalSource source = orchestrator::ProposalSource::model,
                                const std::string& note = "") {
  const std::int64_t id = state.next_trial_id();
  state.apply(orchestrator::TrialStarted{id, task, 1, std::move(config), worker, 0, source, note});
  return id;
}

/// The next attempt of trial `id` starts on `worker`.
inline void start_again(orchestrator::RunState& state, std::int64_t id, const std::string& worker = "local:0") {
  const orchestrator::Trial& t = state.trial(id);
  state.apply(orchestrator::TrialStarted{id, t.task, t.attempts + 1, t.config, worker, 0});
}

/// An ok outcome with `objective`.
inline workers::Outcome ok_with(double objective) {
  workers::Outcome o;
  o.status = workers::TrialStatus::ok;
  o.objective = objective;
  return o;
}

/// The running attempt of trial `id` ends with `outcome`; `final`: no retry follows.
inline void end_attempt(orchestrator::RunState& state, std::int64_t id, const workers::Outcome& outcome,
                        const std::string& worker = "local:0", bool final = true) {
  const orchestrator::Trial& t = state.trial(id);
  state.apply(orchestrator::TrialFinished{id, t.attempts, final, outcome, worker, 0, t.task, t.config, t.proposed_by,
                                          t.proposal_note});
}

/// Results were committed: the policy refits on its thread, and this waits for the fit as a
/// --sync master does before it proposes again.
inline void commit_and_fit(orchestrator::Policy& policy, const orchestrator::RunState& state) {
  policy.results_committed(state);
  while (policy.fitting()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace lbo::testing
