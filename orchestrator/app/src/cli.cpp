#include "cli.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "lbo/cluster/local_transport.hpp"
#include "lbo/cluster/mpi.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/deadline.hpp"
#include "lbo/orchestrator/job_identity.hpp"
#include "lbo/orchestrator/master.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/status.hpp"
#include "lbo/orchestrator/stop_signals.hpp"
#include "lbo/orchestrator/task_requests.hpp"
#include "lbo/orchestrator/version.hpp"
#include "lbo/orchestrator/warm_start.hpp"
#include "lbo/report/html.hpp"
#include "lbo/workers/resources.hpp"

namespace lbo::orchestrator {

namespace {

struct RunOptions {
  std::string job_file;
  std::string run_root = "runs";
  bool fresh = false;
  std::optional<int> local_slots;
  std::optional<double> checkpoint_every_s;
  bool sync = false;
  std::optional<std::string> deadline;
  bool no_lock = false;
  std::string resume_command;
};

// The arguments as a shell would need them: single-quoted where they hold anything unusual.
std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-=:,+@") ==
                          std::string::npos) {
    return arg;
  }
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The command that continues this run: lbo's own arguments, minus --fresh (which would move
// the run aside instead of resuming it), with the run root made absolute.
std::string resume_command(int argc, char** argv, bool under_mpi) {
  std::string command = under_mpi ? "mpirun ... " : "";
  command += shell_quote(std::filesystem::absolute(argv[0]).string());
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--fresh") continue;
    command += " " + shell_quote(arg);
  }
  return command;
}

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
         (job.policy.surrogate == jobs::SurrogateKind::random ? "" : " with " + std::string(jobs::to_string(job.policy.acquisition)));
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

int validate(const std::string& job_file) {
  const jobs::JobSpec job = jobs::load_job_file(job_file);
  const std::vector<WarmTask> warm_start = load_warm_start(job);
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

int run(const RunOptions& options, cluster::MpiSession* mpi) {
  check_run_options(options);
  jobs::JobSpec job = jobs::load_job_file(options.job_file);
  if (options.local_slots) job.workers.local_slots = *options.local_slots;
  const bool use_mpi = mpi != nullptr && mpi->size() > 1;

  Console console;
  TransportFactory make_transport;
  if (use_mpi) {
    cluster::WorkerSetup setup;
    setup.resources = resource_request(job.workers, true);
    setup.rank_timeout_s = job.workers.rank_timeout_s;
    mpi->set_rank_timeout_s(setup.rank_timeout_s);
    make_transport = [mpi, setup, &console](boost::asio::io_context& io, cluster::Transport::CompletionHandler done) {
      return cluster::make_mpi_transport(io, *mpi, std::move(done), setup,
                                         [&console](const std::string& line) { console.log(line); });
    };
  } else {
    const workers::SlotPlan plan = local_slot_plan(job.workers, options.job_file);
    make_transport = [plan](boost::asio::io_context& io, cluster::Transport::CompletionHandler done) {
      return std::make_unique<cluster::LocalTransport>(io, plan, std::move(done));
    };
  }

  // Read before the run directory is touched: bad input leaves nothing written.
  std::vector<WarmTask> warm_start = load_warm_start(job);
  const DeadlineSearch deadline = find_deadline(
      options.deadline, std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  for (const std::string& note : deadline.notes) console.log(note);
  for (const std::string& warning : deadline.warnings) console.warn(warning);
  if (!use_mpi) warn_if_too_few_descriptors(job.workers.local_slots, console);
  LockOptions locking;
  locking.take = !options.no_lock;
  RunDirectory run_dir = RunDirectory::open(options.run_root, job, options.fresh, locking);
  if (!run_dir.locked()) {
    console.log("--no-lock: " + run_dir.path().string() + " is not locked; no other lbo may use it while this one runs");
  } else if (!run_dir.folder_locked()) {
    console.log("the filesystem of " + run_dir.path().string() + " locks files but not folders: the lock file alone keeps "
                "other lbo processes out, so do not remove it while this run is live");
  }
  if (!run_dir.moved_aside().empty()) console.log("moved the earlier run to " + run_dir.moved_aside().string());
  std::optional<RecoveredRun> recovered;
  const JobIdentity identity = JobIdentity::of(job);
  if (run_dir.resuming()) {
    recovered = recover_run(run_dir.path(), &identity);
    for (const std::string& w : recovered->warnings) console.warn(w);
  }
  if (recovered && recovered->empty()) {
    // Killed before its first record: nothing ran, so the job file is all there is to go on.
    console.log(run_dir.journal().string() + " holds no record yet (an earlier start was stopped at once): the run "
                "starts afresh");
    run_dir.freeze_job(job.source_text);
  } else if (recovered) {
    const JobIdentity& recorded = recovered->state.job();
    const std::vector<std::string> why = recorded.incompatibilities(identity);
    if (!why.empty()) {
      std::string message = options.job_file + ": cannot continue the run in " + run_dir.path().string() + ":";
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
  }
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
  Master master(job, run_dir, std::move(make_transport), console, master_options, std::move(recovered));
  return master.run();
}

struct AddTaskOptions {
  std::string run_dir;
  std::string name;
  std::optional<std::string> dataset;
  std::optional<int> budget;
  bool no_lock = false;
};

// A running master takes the task from a request file within a second or so; a stopped run
// takes it into its journal here, under the run's lock.
int add_task(const AddTaskOptions& options) {
  const std::filesystem::path run_dir = std::filesystem::absolute(options.run_dir).lexically_normal();
  if (!has_run_state(run_dir)) {
    throw InputError(options.run_dir + ": not a run directory (no " + RunPaths(run_dir).journal().filename().string() + ")");
  }
  TaskRequest request;
  request.name = options.name;
  request.budget = options.budget;
  if (options.dataset) {
    request.dataset = std::filesystem::absolute(*options.dataset).lexically_normal();
    std::error_code ec;
    if (!std::filesystem::exists(*request.dataset, ec)) {
      throw InputError("--dataset " + *options.dataset + ": does not exist (looked for " + request.dataset->string() + ")");
    }
  }
  // What is wrong with it on the run as it stands is said now, running or not.
  const RecoveredRun run = recover_run(run_dir);
  if (run.empty()) {
    throw InputError(options.run_dir + ": the run has not started yet (its journal holds no record); `lbo run` its job "
                     "file first");
  }
  const JobIdentity& job = run.state.job();
  if (const std::string why = task_conflict(task_from_request(request, 1), job.tasks, job.command); !why.empty()) {
    throw InputError(run_dir.string() + ": cannot add task " + request.name + ": " + why);
  }
  // Without the lock, whether a master runs cannot be told: the request file is safe either way
  // (a running master takes it, a stopped run at its next start).
  if (std::optional<RunDirectory> locked = options.no_lock ? std::nullopt : RunDirectory::lock_existing(run_dir)) {
    const jobs::TaskSpec task =
        add_task_to_stopped_run(run_dir, request, [](const std::string& line) { std::cerr << "lbo: warning: " << line << "\n"; });
    std::cout << "task " << task.name << " added to the stopped run in " << run_dir.string() << " with a budget of "
              << task.budget << " trials; `lbo run` on its job file continues with it\n";
    return kExitDone;
  }
  const std::filesystem::path file = write_task_request(run_dir, request);
  // A master that ends before it reads the request leaves it to the run's next start; lbo
  // add-task then takes the stopped run's lock and adds the task itself.
  const auto master_ended = [&] { return !options.no_lock && !lock_holder(run_dir).held; };
  std::optional<std::string> reply = wait_for_reply(file, kReplyWait, master_ended);
  if (!reply && master_ended()) {
    if (std::optional<RunDirectory> locked = RunDirectory::lock_existing(run_dir)) {
      std::error_code ec;
      if (std::filesystem::remove(file, ec)) {
        const jobs::TaskSpec task = add_task_to_stopped_run(
            run_dir, request, [](const std::string& line) { std::cerr << "lbo: warning: " << line << "\n"; });
        std::cout << "task " << task.name << " added to the stopped run in " << run_dir.string()
                  << " (its master ended before it read the request) with a budget of " << task.budget
                  << " trials; `lbo run` on its job file continues with it\n";
        return kExitDone;
      }
      reply = wait_for_reply(file, std::chrono::milliseconds(0));  // taken by the master just before it ended
    }
  }
  if (!reply) {
    std::cout << (options.no_lock ? "no running master of " + run_dir.string() + " has answered within 30 s (without the "
                                    "lock, lbo cannot tell whether one runs)"
                                  : "the running master of " + run_dir.string() + " has not answered within 30 s, or another lbo holds the run")
              << "; the request waits in " << file.string() << " and is applied when it checks, or at the run's next start\n";
    return kExitDone;
  }
  if (reply->rfind("ok: ", 0) == 0) {
    std::cout << reply->substr(4) << "\n";
    return kExitDone;
  }
  throw InputError(run_dir.string() + ": " + (reply->rfind("error: ", 0) == 0 ? reply->substr(7) : *reply));
}

int status(const std::string& run_dir) {
  std::cout << status_report(run_dir);
  return kExitDone;
}

struct ReportOptions {
  std::vector<std::string> run_dirs;
  std::optional<std::string> out;
};

// One run: its report.html (what the run writes itself); several: the page -o names.
int report_command(const ReportOptions& options) {
  if (options.run_dirs.size() > 1 && !options.out) {
    throw InputError("lbo report: " + std::to_string(options.run_dirs.size()) +
                     " runs side by side need -o FILE (e.g. -o compare.html)");
  }
  std::vector<std::filesystem::path> dirs(options.run_dirs.begin(), options.run_dirs.end());
  const std::filesystem::path out = options.out ? std::filesystem::path(*options.out) : RunPaths(dirs.front()).report_html();
  if (options.out) {
    std::error_code ec;
    if (std::filesystem::is_directory(out, ec)) throw InputError("-o " + *options.out + ": is a folder; name the file to write");
  }
  report::write_report(dirs, out);
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(out, ec);
  char size[32];
  std::snprintf(size, sizeof size, "%.1f MB", ec ? 0.0 : static_cast<double>(bytes) / 1e6);
  std::cout << "report: " << out.string() << " (" << size << ", opens offline)\n";
  return kExitDone;
}

}  // namespace

int run_cli(int argc, char** argv, cluster::MpiSession* mpi) {
  CLI::App app{"lbo: lifelong Bayesian optimisation of costly objectives on local slots or MPI ranks"};
  app.set_version_flag("--version", "lbo " + std::string(lbo_version()));
  app.require_subcommand(1);

  RunOptions run_options;
  CLI::App* run_command = app.add_subcommand("run", "Run a job (rank 0 is the master under mpirun)");
  run_command->add_option("job", run_options.job_file, "Job file (TOML)")->required();
  run_command->add_option("--run-root", run_options.run_root, "Folder holding run directories")
      ->capture_default_str();
  run_command->add_flag("--fresh", run_options.fresh,
                        "Move an existing run directory aside (timestamp suffix) and start anew");
  run_command->add_option("--local-slots", run_options.local_slots,
                          "Concurrent trials without mpirun (overrides [workers] local_slots)")
      ->check(CLI::Range(1, 4096));
  run_command->add_option("--checkpoint-every", run_options.checkpoint_every_s,
                          "Seconds between checkpoints, 0.1 to 1e9 (overrides the job's checkpoint_every_s)");
  run_command->add_flag("--sync", run_options.sync,
                        "Work in rounds: refit on every result before proposing; with a fixed seed the run is "
                        "reproducible exactly");
  run_command->add_option("--deadline", run_options.deadline,
                          "When the allocation ends: unix seconds, an ISO-8601 date-time (local unless it ends in Z or "
                          "+-HH:MM) or +DURATION from now (+3600, +90m, +1h30m). Trials that would not finish by then "
                          "less grace_s are not started, and the run stops in time (exit 75). Default: LBO_DEADLINE, "
                          "else SLURM's end of the job")
      ->type_name("TIME");
  run_command->add_flag("--no-lock", run_options.no_lock,
                        "Do not lock the run directory (for filesystems without file locks): you promise that no "
                        "other lbo uses it meanwhile");

  std::string status_dir;
  CLI::App* status_command = app.add_subcommand("status", "Summarize a run directory (safe while it runs)");
  status_command->add_option("run_dir", status_dir, "Run directory, e.g. runs/quickstart")->required();

  ReportOptions report_options;
  CLI::App* report_sub = app.add_subcommand(
      "report", "Write a run's report.html (plots of its trials, tasks, workers and model), or one page for several runs");
  report_sub->add_option("run_dirs", report_options.run_dirs, "Run directories, e.g. runs/quickstart")->required();
  report_sub->add_option("-o,--output", report_options.out,
                         "The page to write (default: <run>/report.html; required with several runs)");

  AddTaskOptions add_options;
  CLI::App* add_command = app.add_subcommand(
      "add-task", "Add a task (a new dataset) to a run: a running master picks it up within seconds");
  add_command->add_option("run_dir", add_options.run_dir, "Run directory, e.g. runs/quickstart")->required();
  add_command->add_option("--name", add_options.name, "Task name (letters, digits, '.', '_', '-')")->required();
  add_command->add_option("--dataset", add_options.dataset, "The task's dataset (the objective's {dataset})");
  add_command->add_option("--budget", add_options.budget, "Trials for the task (default: [schedule] default_budget)")
      ->check(CLI::Range(1, jobs::kMaxBudget));
  add_command->add_flag("--no-lock", add_options.no_lock,
                        "Do not lock the run directory (for filesystems without file locks): always hand the task "
                        "over as a request, which a running master takes within seconds and a stopped run at its "
                        "next start");

  std::string validate_file;
  CLI::App* validate_command = app.add_subcommand("validate", "Check a job file without running it");
  validate_command->add_option("job", validate_file, "Job file (TOML)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? kExitDone : kExitBadInput;
  }

  // Only a run stops gracefully; the other commands take a stop signal's default action.
  if (!*run_command) release_stop_signals();
  try {
    if (*run_command) {
      run_options.resume_command = resume_command(argc, argv, mpi != nullptr && mpi->size() > 1);
      return run(run_options, mpi);
    }
    if (*status_command) return status(status_dir);
    if (*report_sub) return report_command(report_options);
    if (*add_command) return add_task(add_options);
    if (*validate_command) return validate(validate_file);
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const CorruptStateError& e) {
    std::cerr << "lbo: " << e.what() << "\n";
    return kExitError;
  } catch (const IoError& e) {
    // lbo's own files could not be written before anything ran (a full disk, a read-only
    // filesystem): when that may pass, the same command resumes.
    std::cerr << "lbo: " << e.what() << (e.may_pass() ? "; when that is fixed, the same command continues" : "") << "\n";
    return e.may_pass() ? kExitResumable : kExitError;
  } catch (const std::exception& e) {
    std::cerr << "lbo: error: " << e.what() << "\n";
    return kExitError;
  }
  return kExitError;
}

}  // namespace lbo::orchestrator
