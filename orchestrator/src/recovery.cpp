#include "lbo/orchestrator/recovery.hpp"

#include <algorithm>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/journal.hpp"

namespace fs = std::filesystem;

namespace lbo::orchestrator {

namespace {

constexpr const char* kJournal = "journal.lbo";

// Replays journal records on top of a state, as the live master applied them.
class Replay {
 public:
  explicit Replay(RecoveredRun& run) : run_(run) {}

  void operator()(const RunStarted& r) {
    run_.job = r.job;
    found_job_ = true;
  }

  void operator()(const TaskAdded& r) {
    auto& tasks = run_.job.tasks;
    if (std::none_of(tasks.begin(), tasks.end(), [&](const TaskIdentity& t) { return t.name == r.task.name; })) {
      tasks.push_back(r.task);
    }
  }

  bool found_job() const { return found_job_; }

  void operator()(const TrialStarted& r) {
    auto& trials = run_.trials;
    if (r.attempt == 1 && r.trial == static_cast<std::int64_t>(trials.size())) {
      Trial t;
      t.id = r.trial;
      t.task = r.task;
      t.config = r.config;
      trials.push_back(std::move(t));
    }
    if (r.trial < 0 || r.trial >= static_cast<std::int64_t>(trials.size())) {
      throw CorruptStateError("journal: trial " + std::to_string(r.trial) + " starts before it was created");
    }
    Trial& t = trials[static_cast<std::size_t>(r.trial)];
    t.attempts = std::max(t.attempts, r.attempt);
    t.running = true;
    t.worker = r.worker;
    erase(run_.retries, r.trial);
    erase(run_.interrupted, r.trial);
  }

  void operator()(const TrialFinished& r) {
    if (r.trial < 0 || r.trial >= static_cast<std::int64_t>(run_.trials.size())) {
      throw CorruptStateError("journal: trial " + std::to_string(r.trial) + " finishes before it was created");
    }
    Trial& t = run_.trials[static_cast<std::size_t>(r.trial)];
    t.running = false;
    t.outcome = r.outcome;
    t.worker = r.worker;
    const workers::TrialStatus status = r.outcome.status;
    if (status != workers::TrialStatus::ok && status != workers::TrialStatus::cancelled) ++t.failed_attempts;
    if (r.final) {
      t.finished = true;
    } else if (status == workers::TrialStatus::cancelled) {
      run_.interrupted.push_back(r.trial);
    } else {
      run_.retries.push_back(r.trial);
    }
  }

 private:
  static void erase(std::vector<std::int64_t>& ids, std::int64_t id) {
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  }
  RecoveredRun& run_;
  bool found_job_ = false;
};

}  // namespace

bool has_run_state(const fs::path& run_dir) {
  std::error_code ec;
  return fs::exists(run_dir / kJournal, ec);
}

RecoveredRun recover_run(const fs::path& run_dir) {
  RecoveredRun run;
  CheckpointSearch search = load_newest_checkpoint(run_dir);
  run.warnings = std::move(search.warnings);
  run.next_checkpoint = search.newest_sequence + 1;
  std::uint64_t covered = 0;  // journal bytes the checkpoint already includes
  bool found_job = search.checkpoint.has_value();
  if (search.checkpoint) {
    Checkpoint& c = *search.checkpoint;
    run.job = std::move(c.job);
    run.trials = std::move(c.trials);
    run.retries = std::move(c.retries);
    run.interrupted = std::move(c.interrupted);
    run.policy = std::move(c.policy);
    run.checkpoint_file = search.file;
    run.checkpoint_time = c.unix_time;
    covered = c.journal_bytes;
  }

  std::optional<JournalContents> journal;
  try {
    journal = read_journal(run_dir / kJournal, covered);
  } catch (const CorruptStateError& e) {
    if (!search.checkpoint) {
      throw CorruptStateError(std::string(e.what()) + ", and no intact checkpoint remains in " + run_dir.string() +
                              "; nothing to resume from (move the folder aside with --fresh to start anew)");
    }
    run.warnings.push_back(std::string(e.what()) + "; resuming from " + search.file.filename().string() + " alone");
  }
  if (journal) {
    if (!journal->warning.empty()) run.warnings.push_back(journal->warning);
    run.journal_bytes = journal->valid_bytes;
    if (search.checkpoint && covered > journal->valid_bytes) {
      run.warnings.push_back((run_dir / kJournal).string() + ": shorter than " + search.file.filename().string() +
                             " expects; the checkpoint's state is kept");
    }
    Replay replay(run);
    for (const JournalRecord& record : journal->records) std::visit(replay, record);
    found_job = found_job || replay.found_job();
  }
  // Trials that were running when the run stopped run again first.
  for (Trial& t : run.trials) {
    if (!t.running) continue;
    t.running = false;
    run.interrupted.push_back(t.id);
  }
  std::sort(run.interrupted.begin(), run.interrupted.end());
  run.interrupted.erase(std::unique(run.interrupted.begin(), run.interrupted.end()), run.interrupted.end());
  if (!found_job) throw CorruptStateError(run_dir.string() + ": the journal names no job; nothing to resume from");
  return run;
}

}  // namespace lbo::orchestrator
