// bench/scale_report RUN_DIR [MULTIPLES...]: what a run did with its slots, from its journal.
//
// Prints one line of key=value figures (bench/scale.sh tabulates them):
//   slots, wall_s                from the first RunStarted to the last result
//   utilization                  busy slot-seconds / (slots × wall): an attempt is busy for its
//                                objective's run time (duration_s, measured where it ran), so a
//                                master slow to notice results does not count as busy
//   latency_ms_p50, _p99          how long a free slot waited for work: from the earliest moment
//                                a slot of its pool (local slots, or one MPI rank) fell free
//                                (an attempt's start plus its run time) not yet followed by a
//                                start there, to the next start; the first wave from the start
//                                of the run
//   first_ms_min, _max          of those, the first wave's (slots never used yet): the run's start
//                                up (reading its inputs, a table) and the initial design
//   decision_ms_p50, _p99        the others': slots freed by a result, the master's decisions
//   model_share, interim, fallbacks  (model + model-prior + earlier-best) / everything after each
//                                task's initial design; the interim GP's proposals (counted in
//                                model_share before interim-gp had a label of its own); random
//                                fallbacks
//   best_t<k>_at<m>               task k's best after m trials (m = each MULTIPLE × slots), by
//                                trial creation order; minimize jobs report the minimum
// Only a run's first invocation is measured (a resumed run's second RunStarted ends it).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace {

using namespace lbo::orchestrator;

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const auto i = static_cast<std::size_t>(std::min<double>(static_cast<double>(values.size() - 1), p * static_cast<double>(values.size())));
  return values[i];
}

// The pool whose free capacity a start fills: all local slots are one ("local:3" → "local"; the
// master takes the first free one), an MPI rank is one ("rank2:1" and "rank2" → "rank2": the
// worker picks its slot only when the order arrives).
std::string unit_of(const std::string& worker) { return worker.substr(0, worker.find(':')); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: scale_report RUN_DIR [MULTIPLES...]\n");
    return 2;
  }
  std::vector<int> multiples;
  for (int i = 2; i < argc; ++i) multiples.push_back(std::atoi(argv[i]));
  const JournalContents journal = read_journal(RunPaths(argv[1]).journal());
  RunState state;
  double begin = NAN, end = 0, busy = 0;
  int slots = 0, runs = 0;
  std::map<std::int64_t, double> started;                 // trial → start of its running attempt
  std::map<std::string, std::vector<double>> freed;      // unit → times a slot there became free
  std::vector<double> latencies, first_wave, decisions;
  // Intermediate reports: from the worker reading a report to the master journaling it, and to
  // the stop it caused (the attempt's newest report before the stop). Measured two ways: by the
  // worker's own clock (ReportedStep::read_unix: the master's delay alone, the spawn queue apart;
  // one machine's clock under local slots), and from the master's dispatch plus the report's
  // seconds since the spawn (an upper bound by the spawn's delay; the only one for journals
  // written before read_unix).
  std::vector<double> report_delays, stop_delays, report_worker, stop_worker;
  std::map<std::pair<std::int64_t, int>, double> last_read;  // (trial, attempt) → its newest report's read_unix
  // Busy intervals, for the utilization while work was left to hand out (until the last start):
  // the drain at the end (slots idle while the last trials run) is no cost of the master's.
  std::vector<std::pair<double, double>> busy_spans;
  double last_start = NAN;
  for (const JournalRecord& record : journal.records) {
    if (const auto* r = std::get_if<RunStarted>(&record)) {
      if (++runs > 1) break;
      begin = r->unix_time;
      slots = r->slots;
    } else if (const auto* s = std::get_if<TrialStarted>(&record)) {
      started[s->trial] = s->unix_time;
      last_start = s->unix_time;
      auto& free_at = freed[unit_of(s->worker)];
      // The earliest free moment this start could have used; the first wave waits from the start.
      double since = begin;
      const bool first = free_at.empty();
      if (!first) {
        since = free_at.front();
        free_at.erase(free_at.begin());
      }
      latencies.push_back(1000 * (s->unix_time - since));
      (first ? first_wave : decisions).push_back(latencies.back());
    } else if (const auto* batch = std::get_if<TrialsReported>(&record)) {
      for (const ReportedStep& step : batch->reports) {
        if (const auto it = started.find(step.trial); it != started.end()) {
          report_delays.push_back(1000 * (batch->unix_time - it->second - step.elapsed_s));
        }
        if (step.read_unix > 0) {
          report_worker.push_back(1000 * (batch->unix_time - step.read_unix));
          double& last = last_read[{step.trial, step.attempt}];
          last = std::max(last, step.read_unix);
        }
      }
    } else if (const auto* f = std::get_if<TrialFinished>(&record)) {
      const auto it = started.find(f->trial);
      if (it != started.end() && f->outcome.status == lbo::workers::TrialStatus::stopped) {
        stop_delays.push_back(1000 * (f->unix_time - it->second - f->outcome.duration_s));
      }
      if (const auto read = last_read.find({f->trial, f->attempt});
          read != last_read.end() && f->outcome.status == lbo::workers::TrialStatus::stopped) {
        stop_worker.push_back(1000 * (f->unix_time - read->second));
      }
      const double free_at = it != started.end() ? it->second + f->outcome.duration_s : f->unix_time;
      busy += f->outcome.duration_s;
      if (it != started.end()) busy_spans.emplace_back(it->second, it->second + f->outcome.duration_s);
      auto& free_times = freed[unit_of(f->worker)];
      free_times.insert(std::upper_bound(free_times.begin(), free_times.end(), free_at), free_at);
      end = std::max(end, f->unix_time);
    }
    state.apply(record);
  }
  const double wall = end - begin;
  std::printf("slots=%d wall_s=%.2f utilization=%.3f latency_ms_p50=%.2f latency_ms_p99=%.2f", slots, wall,
              wall > 0 && slots > 0 ? busy / (slots * wall) : NAN, percentile(latencies, 0.5), percentile(latencies, 0.99));
  double busy_open = 0;
  for (const auto& [from, to] : busy_spans) busy_open += std::max(0.0, std::min(to, last_start) - from);
  const double open = last_start - begin;
  std::printf(" utilization_open=%.3f", open > 0 && slots > 0 ? busy_open / (slots * open) : NAN);
  std::printf(" reports=%zu report_ms_p50=%.2f report_ms_p99=%.2f stops=%zu stop_ms_p50=%.2f stop_ms_p99=%.2f",
              report_delays.size(), percentile(report_delays, 0.5), percentile(report_delays, 0.99), stop_delays.size(),
              percentile(stop_delays, 0.5), percentile(stop_delays, 0.99));
  std::printf(" report_worker_ms_p50=%.2f report_worker_ms_p99=%.2f stop_worker_ms_p50=%.2f stop_worker_ms_p99=%.2f stop_worker_ms_max=%.2f",
              percentile(report_worker, 0.5), percentile(report_worker, 0.99), percentile(stop_worker, 0.5),
              percentile(stop_worker, 0.99), percentile(stop_worker, 1.0));
  int model = 0, interim = 0, fallbacks = 0, after_initial = 0;
  for (const TaskProgress& p : state.tasks()) {
    model += p.proposed_by(ProposalSource::model) + p.proposed_by(ProposalSource::model_prior) +
             p.proposed_by(ProposalSource::earlier_best);
    interim += p.proposed_by(ProposalSource::interim_gp);
    fallbacks += p.proposed_by(ProposalSource::random_fallback);
    after_initial += p.created - p.proposed_by(ProposalSource::initial) - p.proposed_by(ProposalSource::random);
  }
  std::printf(" model_share=%.3f interim=%d fallbacks=%d",
              after_initial > 0 ? static_cast<double>(model) / after_initial : NAN, interim, fallbacks);
  const bool maximize = state.job().direction == lbo::jobs::Direction::maximize;
  for (int task = 0; task < static_cast<int>(state.tasks().size()); ++task) {
    double best = maximize ? -INFINITY : INFINITY;
    std::vector<double> best_after;  // after each trial of the task
    for (const std::int64_t id : state.task_trials(task)) {
      const Trial& t = state.trial(id);
      if (t.finished && t.outcome.status == lbo::workers::TrialStatus::ok) {
        best = maximize ? std::max(best, t.outcome.objective) : std::min(best, t.outcome.objective);
      }
      best_after.push_back(best);
    }
    for (int m : multiples) {
      const auto n = static_cast<std::size_t>(m * slots);
      std::printf(" best_t%d_at%d=%.4g", task + 1, m, n >= 1 && n <= best_after.size() ? best_after[n - 1] : NAN);
    }
    std::printf(" best_t%d=%.4g", task + 1, best_after.empty() ? NAN : best_after.back());
  }
  std::printf(" first_ms_min=%.2f first_ms_max=%.2f decision_ms_p50=%.2f decision_ms_p99=%.2f", percentile(first_wave, 0),
              percentile(first_wave, 1), percentile(decisions, 0.5), percentile(decisions, 0.99));
  std::printf("\n");
  return 0;
}
