#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "lbo/cluster/in_process_transport.hpp"
#include "lbo/cluster/local_transport.hpp"
#include "lbo/cluster/mpi.hpp"
#include "lbo/cluster/simulated_transport.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/deadline.hpp"
#include "lbo/orchestrator/job_identity.hpp"
#include "lbo/orchestrator/master.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/warm_start.hpp"
#include "lbo/report/html.hpp"
#include "lbo/workers/resources.hpp"
#include "lbo/workers/tabulated.hpp"

namespace lbo::orchestrator {

namespace {

// A running trial holds about eight descriptors: with too few, trials cannot start (lbo's own
// error: the run stops), so say it before the run starts.
void warn_if_too_few_descriptors(int slots, Console& console) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const auto needed = static_cast<rlim_t>(8 * slots + 64);
  if (limit.rlim_cur >= needed) return;
  console.warn(std::to_string(slots) + " local slots need about " + std::to_string(needed) + " open files, and this process " +
               "may open " + std::to_string(limit.rlim_cur) + " (ulimit -n): raise the limit or use fewer slots");
}

std::string describe(const jobs::JobSpec& job) {
  return std::to_string(job.space.size()) + " parameter(s), " + std::to_string(job.tasks.size()) + " task(s), " +
         std::to_string(job.total_budget()) + " trials, " + std::string(jobs::to_string(job.objective.direction)) +
         ", surrogate " + std::string(jobs::to_string(job.policy.surrogate)) +
         (job.policy.surrogate == jobs::SurrogateKind::random ? "" : " with " + std::string(jobs::to_string(job.policy.acquisition))) +
         (job.workers.simulate > 0 ? ", simulated on " + std::to_string(job.workers.simulate) + " virtual slot(s), durations " +
                                         jobs::to_string(job.workers.simulate_duration)
                                   : std::string());
}

// The job's [workers] keys as a worker plans its slots from them.
workers::ResourceRequest resource_request(const jobs::WorkersSpec& w, bool mpi) {
  workers::ResourceRequest r;
  r.slots = mpi ? w.slots_per_rank : std::optional<int>(w.local_slots);
  r.threads_per_trial = w.threads_per_trial.value_or(1);
  r.manage_threads = w.threads_per_trial.has_value() || (mpi && !w.slots_per_rank);
  r.gpus_per_trial = w.gpus_per_trial;
  r.gpus = w.gpus;
  return r;
}

// Local slots over this process's cores and GPUs. Without a GPU for gpus_per_trial there is no
// slot at all: bad input for this machine, said before anything is written.
workers::SlotPlan local_slot_plan(const jobs::WorkersSpec& w, const std::string& job_file) {
  const workers::ResourceRequest request = resource_request(w, false);
  const workers::VisibleGpus gpus = workers::visible_gpus(request);
  workers::SlotPlan plan = workers::plan_slots(request, workers::affinity_cores(), gpus.devices, "local slots");
  if (plan.slots.empty()) {
    throw InputError(job_file + ": [workers] gpus_per_trial = " + std::to_string(w.gpus_per_trial) + " needs " +
                     std::to_string(w.gpus_per_trial) + " GPU(s) per slot, and " +
                     (gpus.source.empty() ? std::string("no GPU is visible (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, "
                                                        "SLURM_STEP_GPUS and SLURM_JOB_GPUS are unset)")
                                          : std::to_string(gpus.devices.size()) + " are visible (" + gpus.source + ")") +
                     "; set [workers] gpus or gpus_per_trial = 0");
  }
  return plan;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

// The latest time a recovered run recorded: where a simulated run's virtual clock goes on from.
double last_recorded_time(const RunState& state) {
  double latest = 0;
  for (const Trial& t : state.trials()) latest = std::max({latest, t.started_unix, t.finished_unix});
  return latest;
}

}  // namespace

int validate_command(const std::string& job_file) {
  const jobs::JobSpec job = jobs::load_job_file(job_file);
  std::vector<std::string> notes;
  const std::vector<WarmTask> warm_start = load_warm_start(job, &notes);
  for (const std::string& note : notes) std::cout << "note: " << note << "\n";
  std::cout << job_file << ": ok: " << describe(job);
  if (!job.policy.warm_start.empty()) std::cout << ", " << warm_start.size() << " warm-start task(s)";
  std::cout << "\n";
  return kExitDone;
}

// The command line gets the checks of the job-file keys it overrides, before anything is read.
void check_run_options(const RunOptions& options) {
  if (options.run_root.empty()) {
    throw InputError("--run-root: empty; name the folder that holds run directories (default: runs)");
  }
  std::error_code ec;
  if (std::filesystem::exists(options.run_root, ec) && !std::filesystem::is_directory(options.run_root, ec)) {
    throw InputError("--run-root " + options.run_root + ": not a folder; name the folder that holds run directories");
  }
  if (options.checkpoint_every_s) {
    if (const std::string why = jobs::checkpoint_every_problem(*options.checkpoint_every_s); !why.empty()) {
      throw InputError("--checkpoint-every: " + why + " (as the job file's checkpoint_every_s)");
    }
  }
}

namespace {

// A simulated run's slots: the table's trials on `clock`, each taking its simulate_duration.
TransportFactory simulated_transport(const jobs::JobSpec& job, std::shared_ptr<cluster::VirtualClock> clock) {
  const std::shared_ptr<const jobs::ObjectiveTable> table = job.objective.table_data;
  const jobs::SimulatedDuration duration = job.workers.simulate_duration;
  const std::string what = duration.kind == jobs::SimulatedDuration::Kind::table
                               ? "from column " + table->spec().time_column + " of " + table->spec().path.filename().string()
                               : jobs::to_string(duration);
  return [table, space = job.space, duration, seed = job.seed, slots = job.workers.simulate, clock, what](
             boost::asio::io_context& io, cluster::Transport::CompletionHandler done) {
    return std::make_unique<cluster::SimulatedTransport>(
        io, clock, slots,
        [table, space, duration, seed](const workers::WorkOrder& order) {
          workers::TabulatedEvaluation looked_up = workers::look_up_tabulated(*table, space, order);
          return cluster::SimulatedAttempt{
              std::move(looked_up.outcome),
              cluster::simulated_duration_s(duration, looked_up.time_s, seed, order.trial, order.attempt)};
        },
        std::move(done), what);
  };
}

// How the master reaches its slots: a simulation on `clock` (set for a simulated run), MPI
// worker ranks under a launcher, else local slots over this process's cores and GPUs.
TransportFactory transport_for(const jobs::JobSpec& job, const std::string& job_file, cluster::MpiSession* mpi,
                               Console& console, const std::shared_ptr<cluster::VirtualClock>& clock) {
  if (job.objective.table_data) {
    if (mpi != nullptr && mpi->size() > 1) {
      throw InputError(job.job_file.string() + ": objective.table: a tabulated objective is looked up in the master, "
                       "and worker ranks would idle; start lbo without mpirun");
    }
    if (clock) return simulated_transport(job, clock);
    const std::shared_ptr<const jobs::ObjectiveTable> table = job.objective.table_data;
    const int slots = job.workers.local_slots;
    return [table, space = job.space, slots](boost::asio::io_context& io, cluster::Transport::CompletionHandler done) {
      return std::make_unique<cluster::InProcessTransport>(
          io, slots, [table, space](const workers::WorkOrder& order) { return workers::evaluate_tabulated(*table, space, order); },
          std::move(done), "table " + table->spec().path.filename().string());
    };
  }
  if (mpi != nullptr && mpi->size() > 1) {
    cluster::WorkerSetup setup;
    setup.resources = resource_request(job.workers, true);
    setup.rank_timeout_s = job.workers.rank_timeout_s;
    mpi->set_rank_timeout_s(setup.rank_timeout_s);
    return [mpi, setup, &console](boost::asio::io_context& io, cluster::Transport::CompletionHandler done) {
      return cluster::make_mpi_transport(io, *mpi, std::move(done), setup,
                                         [&console](const std::string& line) { console.log(line); });
    };
  }
  const workers::SlotPlan plan = local_slot_plan(job.workers, job_file);
  return [plan](boost::asio::io_context& io, cluster::Transport::CompletionHandler done) {
    return std::make_unique<cluster::LocalTransport>(io, plan, std::move(done));
  };
}

void log_locking(const RunDirectory& run_dir, Console& console) {
  if (!run_dir.locked()) {
    console.log("--no-lock: " + run_dir.path().string() + " is not locked; no other lbo may use it while this one runs");
  } else if (!run_dir.folder_locked()) {
    console.log("the filesystem of " + run_dir.path().string() + " locks files but not folders: the lock file alone keeps "
                "other lbo processes out, so do not remove it while this run is live");
  }
  if (!run_dir.moved_aside().empty()) console.log("moved the earlier run to " + run_dir.moved_aside().string());
}

// A run directory that holds a run: what it recorded, checked against the job file, whose new
// tasks join the recorded ones. Null for a new run.
// A --sync run keeps the journal's tail, whose proposals the master replays.
std::optional<RecoveredRun> recover_for(RunDirectory& run_dir, jobs::JobSpec& job, const std::string& job_file,
                                        bool sync, Console& console) {
  if (!run_dir.resuming()) return std::nullopt;
  const JobIdentity identity = JobIdentity::of(job);
  std::optional<RecoveredRun> recovered = recover_run(run_dir.path(), &identity, sync);
  for (const std::string& w : recovered->warnings) console.warn(w);
  if (recovered->empty()) {
    // Killed before its first record: nothing ran, so the job file is all there is to go on.
    console.log(run_dir.journal().string() + " holds no record yet (an earlier start was stopped at once): the run "
                "starts afresh");
    run_dir.freeze_job(job.source_text);
    return recovered;
  }
  const JobIdentity& recorded = recovered->state.job();
  const std::vector<std::string> why = recorded.incompatibilities(identity);
  if (!why.empty()) {
    std::string message = job_file + ": cannot continue the run in " + run_dir.path().string() + ":";
    for (const std::string& w : why) message += "\n  " + w;
    throw InputError(message + "\npass --fresh to move that run aside and start a new one");
  }
  if (!run_dir.stale_lock_holder().empty()) {
    console.log("took over the lock of " + run_dir.stale_lock_holder() +
                ", which stopped without ending (killed, or its machine lost)");
  }
  const std::size_t known = recorded.tasks.size();
  job.tasks = recorded.merged_tasks(job);
  if (job.tasks.size() > known) {
    console.log(std::to_string(job.tasks.size() - known) + " task(s) added to the job file since the last run");
  }
  run_dir.freeze_job(job.source_text);
  return recovered;
}

MasterOptions master_options_for(const jobs::JobSpec& job, const RunOptions& options, bool use_mpi,
                                 std::vector<WarmTask> warm_start, const DeadlineSearch& deadline,
                                 const RunDirectory& run_dir, Console& console) {
  MasterOptions master_options;
  master_options.warm_start = std::move(warm_start);
  if (!master_options.warm_start.empty()) {
    std::size_t trials = 0;
    for (const WarmTask& w : master_options.warm_start) trials += w.configs.size();
    console.log("warm start: " + std::to_string(master_options.warm_start.size()) + " finished task(s), " +
                std::to_string(trials) + " trials, from " + std::to_string(job.policy.warm_start.size()) + " run(s)");
  }
  master_options.sync = options.sync;
  if (job.policy.surrogate != jobs::SurrogateKind::random) {
    const FitThreads threads = fit_threads(job, use_mpi);
    master_options.fit_threads = threads.count;
    console.log("model fits and proposals use " + std::to_string(threads.count) + " thread(s) (" + threads.why + ")");
  }
  master_options.checkpoint_every_s = options.checkpoint_every_s;
  master_options.deadline = deadline.deadline;
  master_options.resume_command = options.resume_command;
  if (const char* file = std::getenv("LBO_STATUS_FILE"); file != nullptr && *file != '\0') {
    master_options.status_file = file;
  }
  master_options.write_report = [dir = run_dir.path(), file = run_dir.report_html()](bool end, int exit_code) {
    report::write_report({dir}, file, end ? std::optional<int>(exit_code) : std::nullopt);
  };
  return master_options;
}

}  // namespace

int run_command(const RunOptions& options, cluster::MpiSession* mpi) {
  check_run_options(options);
  return run_job(jobs::load_job_file(options.job_file), options, mpi);
}

int run_job(jobs::JobSpec job, const RunOptions& options, cluster::MpiSession* mpi) {
  if (options.local_slots) job.workers.local_slots = *options.local_slots;
  if (options.simulate) {
    job.workers.simulate = *options.simulate;
    if (const std::string why = jobs::simulation_problem(job, "--simulate"); !why.empty()) throw InputError(why);
  }
  const bool use_mpi = mpi != nullptr && mpi->size() > 1;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // A simulated run's clock; a resumed one goes on from its last recorded time (below).
  const std::shared_ptr<cluster::VirtualClock> clock =
      job.workers.simulate > 0 ? std::make_shared<cluster::VirtualClock>(now) : nullptr;

  Console console;
  TransportFactory make_transport = transport_for(job, options.job_file, mpi, console, clock);
  // Read before the run directory is touched: bad input leaves nothing written.
  std::vector<std::string> warm_notes;
  std::vector<WarmTask> warm_start = load_warm_start(job, &warm_notes);
  for (const std::string& note : warm_notes) console.log(note);
  DeadlineSearch deadline = find_deadline(options.deadline, now);
  for (const std::string& note : deadline.notes) console.log(note);
  for (const std::string& warning : deadline.warnings) console.warn(warning);
  if (clock && deadline.deadline) {
    console.log("the deadline does not apply to a simulated run, whose clock is virtual");
    deadline.deadline.reset();
  }
  if (!use_mpi && !clock) warn_if_too_few_descriptors(job.workers.local_slots, console);
  LockOptions locking;
  locking.take = !options.no_lock;
  RunDirectory run_dir = RunDirectory::open(options.run_root, job, options.fresh, locking);
  log_locking(run_dir, console);
  std::optional<RecoveredRun> recovered = recover_for(run_dir, job, options.job_file, options.sync, console);
  MasterOptions master_options =
      master_options_for(job, options, use_mpi, std::move(warm_start), deadline, run_dir, console);
  if (clock) {
    if (recovered) clock->advance_to(last_recorded_time(recovered->state));
    master_options.clock = [clock] { return clock->now(); };
  }
  const double virtual_start = clock ? clock->now() : 0;
  Master master(job, run_dir, std::move(make_transport), console, master_options, std::move(recovered));
  const int exit_code = master.run();
  if (clock) {
    console.log("simulated: " + seconds(clock->now() - virtual_start) + " of virtual time in " +
                seconds(clock->real_elapsed_s()) + " of real time (" + seconds(clock->jumped_s()) +
                " jumped over while the master waited); times in results.csv, the journal and the report are virtual");
  }
  return exit_code;
}

}  // namespace lbo::orchestrator
