#include "lbo/orchestrator/recovery.hpp"

#include <algorithm>
#include <chrono>
#include <unordered_set>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/files.hpp"

namespace fs = std::filesystem;

namespace lbo::orchestrator {

namespace {

std::string id_list(const std::vector<std::int64_t>& ids) {
  std::string text;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i == 8) return text + " and " + std::to_string(ids.size() - 8) + " more";
    text += (i == 0 ? "" : ", ") + std::to_string(ids[i]);
  }
  return text;
}

// Trials that were running before the last damaged stretch (in the checkpoint's state, or by a
// start record before it) and never ended after it: their result may have been in the damaged
// bytes, so they run again, as after any stop.
std::vector<std::int64_t> perhaps_lost_results(const JournalContents& journal, const RunState& state) {
  std::vector<std::int64_t> ids;
  if (journal.damaged.empty()) return ids;
  const std::size_t last_gap = journal.damaged.back().records_before;
  std::unordered_set<std::int64_t> started_after;  // a start record after the last gap
  for (std::size_t i = last_gap; i < journal.records.size(); ++i) {
    if (const auto* s = std::get_if<TrialStarted>(&journal.records[i])) started_after.insert(s->trial);
  }
  for (const Trial& t : state.trials()) {
    if (t.running && !t.lost() && started_after.count(t.id) == 0) ids.push_back(t.id);
  }
  return ids;
}

}  // namespace

bool has_run_state(const fs::path& run_dir) { return RunPaths(run_dir).holds_run(); }

RecoveredRun recover_run(const fs::path& run_dir, const JobIdentity* job_file, bool keep_tail) {
  const RunPaths paths(run_dir);
  RecoveredRun run;
  CheckpointSearch search = load_newest_checkpoint(run_dir);
  run.warnings = std::move(search.warnings);
  run.next_checkpoint = search.newest_sequence + 1;
  if (search.checkpoint) {
    Checkpoint& c = *search.checkpoint;
    run.state = RunState(std::move(c.job), std::move(c.trials), std::move(c.retries), std::move(c.interrupted),
                         c.round_handed_out);
    run.policy = std::move(c.policy);
    run.checkpoint_file = search.file;
    run.checkpoint_time = c.unix_time;
    run.checkpoint_bytes = c.journal_bytes;
  }

  const std::string journal_name = paths.journal().string();
  run.journal = read_journal(paths.journal(), run.checkpoint_bytes);
  JournalContents& journal = run.journal;
  for (const std::string& w : journal.warnings) run.warnings.push_back(w);
  if (search.checkpoint && journal.file_bytes < run.checkpoint_bytes) {
    run.warnings.push_back(journal_name + ": shorter than " + search.file.filename().string() +
                           " expects (" + std::to_string(journal.file_bytes) + " of " + std::to_string(run.checkpoint_bytes) +
                           " bytes); the checkpoint's state is kept, and new records go after its offset");
  }

  const bool job_recorded = run.state.has_job() || std::any_of(journal.records.begin(), journal.records.end(), [](const JournalRecord& r) {
                              return std::holds_alternative<RunStarted>(r);
                            });
  if (!job_recorded && !journal.records.empty()) {
    if (job_file == nullptr) {
      throw CorruptStateError(run_dir.string() + ": no intact record names the run's job; `lbo run` with its job file "
                              "resumes it (the job file then stands for the lost record)");
    }
    run.warnings.push_back(journal_name + ": no intact record names the run's job; resuming under the job file's");
    run.state.apply(RunStarted{"", 0, 0, *job_file});
  }
  const bool no_records = journal.records.empty();
  if (keep_tail) run.tail = JournalTail{run.state, {}};
  for (const JournalRecord& record : journal.records) run.state.apply(record);
  const std::vector<std::int64_t> rerun = perhaps_lost_results(journal, run.state);
  if (keep_tail) {
    run.tail->records = std::move(journal.records);
  }
  journal.records.clear();
  journal.records.shrink_to_fit();

  if (!rerun.empty()) {
    run.warnings.push_back(journal_name + ": trial(s) " + id_list(rerun) +
                           " started before the damaged bytes and have no result after them: a result there "
                           "is lost, and they run again");
  }
  for (const std::string& a : run.state.anomalies()) run.warnings.push_back(journal_name + ": " + a);
  run.state.stop_running();

  std::vector<std::int64_t> lost;
  for (const Trial& t : run.state.trials()) {
    if (t.lost()) lost.push_back(t.id);
  }
  if (!lost.empty()) {
    run.warnings.push_back(journal_name + ": trial(s) " + id_list(lost) +
                           " have no intact record left that names their task and configuration; their ids are not "
                           "reused and their tasks run other trials in their place");
  }
  run.maybe_running = run.state.interrupted();
  run.maybe_running.insert(run.maybe_running.end(), lost.begin(), lost.end());

  if (!search.checkpoint && no_records && journal.damage_found()) {
    throw CorruptStateError(journal_name + ": not an lbo journal, or nothing in it is intact, and no intact checkpoint "
                            "remains in " + run_dir.string() + "; nothing to resume from (nothing was changed; move the "
                            "folder aside with --fresh to start anew)");
  }
  return run;
}

JournalWriter continue_journal(const RunPaths& run, const RecoveredRun& recovered,
                               const std::function<void(const std::string&)>& log) {
  const JournalContents& journal = recovered.journal;
  if (journal.damage_found()) {
    const fs::path copy = run.damaged_copy(run.journal(), std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()));
    copy_file_synced(run.journal(), copy);
    log("kept the damaged journal as " + copy.string() + "; the run continues in " + run.journal().string() +
        (journal.header_damaged ? " with its header rewritten" : "") + ", whose damaged bytes are skipped on reading");
  }
  return JournalWriter::resume(run.journal(), journal, recovered.checkpoint_bytes);
}

}  // namespace lbo::orchestrator
