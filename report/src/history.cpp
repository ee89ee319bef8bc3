#include "history.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <variant>

#include "lbo/orchestrator/journal.hpp"
#include "lbo/workers/work_order.hpp"

namespace lbo::report {

History read_history(const std::filesystem::path& journal_file) {
  History h;
  const orchestrator::JournalContents journal = orchestrator::read_journal(journal_file, 0);
  std::map<workers::AttemptKey, std::size_t> index;
  const auto seen = [&](double t) {
    h.last_activity = std::max(h.last_activity, t);
    if (!h.allocations.empty()) h.allocations.back().last_seen = std::max(h.allocations.back().last_seen, t);
  };
  for (const orchestrator::JournalRecord& record : journal.records) {
    if (const auto* r = std::get_if<orchestrator::RunStarted>(&record)) {
      h.allocations.push_back({r->unix_time, r->unix_time, r->slots, r->lbo_version});
      seen(r->unix_time);
    } else if (const auto* s = std::get_if<orchestrator::TrialStarted>(&record)) {
      index[{s->trial, s->attempt}] = h.attempts.size();
      h.attempts.push_back({s->trial, s->attempt, s->worker, s->unix_time, 0, {}, {}, {}, false,
                            h.allocations.empty() ? kNoAllocation : h.allocations.size() - 1});
      seen(s->unix_time);
    } else if (const auto* f = std::get_if<orchestrator::TrialFinished>(&record)) {
      auto at = index.find({f->trial, f->attempt});
      if (at == index.end()) {  // its start record is lost: the attempt is known from its end
        at = index.emplace(workers::AttemptKey{f->trial, f->attempt}, h.attempts.size()).first;
        h.attempts.push_back({f->trial, f->attempt, f->worker, 0, 0, {}, {}, {}, false,
                              h.allocations.empty() ? kNoAllocation : h.allocations.size() - 1});
      }
      Attempt& a = h.attempts[at->second];
      // A paused attempt's trial ended `stopped` later (its task had nothing left to run): the
      // attempt's process ended at the pause, and its slot was free from then on.
      if (!(a.status == "paused" && a.end > 0)) a.end = f->unix_time;
      a.status = workers::to_string(f->outcome.status);
      a.cores = f->outcome.cores;
      a.gpus = f->outcome.gpus;
      a.final = f->final;
      if (!f->worker.empty()) a.worker = f->worker;  // it names the slot an MPI worker picked
      seen(f->unix_time);
    } else if (const auto* reported = std::get_if<orchestrator::TrialsReported>(&record)) {
      for (const orchestrator::ReportedStep& step : reported->reports) {
        if (step.metrics_json.size() > 2) h.reported_metrics[step.trial] = {step.step, step.metrics_json};  // not "{}"
      }
    } else if (const auto* t = std::get_if<orchestrator::TaskAdded>(&record)) {
      seen(t->unix_time);
    }
  }
  return h;
}

}  // namespace lbo::report
