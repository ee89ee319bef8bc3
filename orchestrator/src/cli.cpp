#include "cli.hpp"

#include <filesystem>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "lbo/cluster/local_transport.hpp"
#include "lbo/cluster/mpi.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/job_identity.hpp"
#include "lbo/orchestrator/master.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/status.hpp"

namespace lbo::orchestrator {

namespace {

struct RunOptions {
  std::string job_file;
  std::string run_root = "runs";
  bool fresh = false;
  std::optional<int> local_slots;
  std::optional<double> checkpoint_every_s;
  bool sync = false;
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

std::string describe(const jobs::JobSpec& job) {
  return std::to_string(job.space.size()) + " parameter(s), " + std::to_string(job.tasks.size()) + " task(s), " +
         std::to_string(job.total_budget()) + " trials, " + std::string(jobs::to_string(job.objective.direction)) +
         ", surrogate " + std::string(jobs::to_string(job.policy.surrogate)) +
         (job.policy.surrogate == jobs::SurrogateKind::random ? "" : " with " + std::string(jobs::to_string(job.policy.acquisition)));
}

int validate(const std::string& job_file) {
  const jobs::JobSpec job = jobs::load_job_file(job_file);
  std::cout << job_file << ": ok: " << describe(job) << "\n";
  return kExitDone;
}

int run(const RunOptions& options, cluster::MpiSession* mpi) {
  jobs::JobSpec job = jobs::load_job_file(options.job_file);
  if (options.local_slots) job.workers.local_slots = *options.local_slots;
  const bool use_mpi = mpi != nullptr && mpi->size() > 1;

  TransportFactory make_transport;
  if (use_mpi) {
    cluster::WorkerSetup setup;
    setup.slots_per_rank = job.workers.slots_per_rank;
    make_transport = [mpi, setup](boost::asio::io_context& io, cluster::Transport::CompletionHandler done) {
      return cluster::make_mpi_transport(io, *mpi, std::move(done), setup);
    };
  } else {
    const int slots = job.workers.local_slots;
    make_transport = [slots](boost::asio::io_context& io, cluster::Transport::CompletionHandler done) {
      return std::make_unique<cluster::LocalTransport>(io, slots, std::move(done));
    };
  }

  Console console;
  RunDirectory run_dir = RunDirectory::open(options.run_root, job, options.fresh);
  if (!run_dir.moved_aside().empty()) console.log("moved the earlier run to " + run_dir.moved_aside().string());
  std::optional<RecoveredRun> recovered;
  if (run_dir.resuming()) {
    recovered = recover_run(run_dir.path());
    for (const std::string& w : recovered->warnings) console.warn(w);
    const std::vector<std::string> why = recovered->job.incompatibilities(JobIdentity::of(job));
    if (!why.empty()) {
      std::string message = options.job_file + ": cannot continue the run in " + run_dir.path().string() + ":";
      for (const std::string& w : why) message += "\n  " + w;
      throw InputError(message + "\npass --fresh to move that run aside and start a new one");
    }
    if (!run_dir.stale_lock_holder().empty()) {
      console.log("took over the lock of " + run_dir.stale_lock_holder() + ", which no longer runs");
    }
    if (job.tasks.size() > recovered->job.tasks.size()) {
      console.log(std::to_string(job.tasks.size() - recovered->job.tasks.size()) + " task(s) added since the last run");
    }
    run_dir.freeze_job(job.source_text);
  }
  MasterOptions master_options;
  master_options.sync = options.sync;
  master_options.checkpoint_every_s = options.checkpoint_every_s;
  master_options.resume_command = options.resume_command;
  Master master(job, run_dir, std::move(make_transport), console, master_options, std::move(recovered));
  return master.run();
}

int status(const std::string& run_dir) {
  std::cout << status_report(run_dir);
  return kExitDone;
}

}  // namespace

int run_cli(int argc, char** argv, cluster::MpiSession* mpi) {
  CLI::App app{"lbo: lifelong Bayesian optimisation of costly objectives on local slots or MPI ranks"};
  app.set_version_flag("--version", std::string("lbo ") + LBO_VERSION);
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
                          "Seconds between checkpoints (overrides the job's checkpoint_every_s)")
      ->check(CLI::PositiveNumber);
  run_command->add_flag("--sync", run_options.sync,
                        "Work in rounds: refit on every result before proposing; with a fixed seed the run is "
                        "reproducible exactly");

  std::string status_dir;
  CLI::App* status_command = app.add_subcommand("status", "Summarize a run directory (safe while it runs)");
  status_command->add_option("run_dir", status_dir, "Run directory, e.g. runs/quickstart")->required();

  std::string validate_file;
  CLI::App* validate_command = app.add_subcommand("validate", "Check a job file without running it");
  validate_command->add_option("job", validate_file, "Job file (TOML)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? kExitDone : kExitBadInput;
  }

  try {
    if (*run_command) {
      run_options.resume_command = resume_command(argc, argv, mpi != nullptr && mpi->size() > 1);
      return run(run_options, mpi);
    }
    if (*status_command) return status(status_dir);
    if (*validate_command) return validate(validate_file);
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const CorruptStateError& e) {
    std::cerr << "lbo: " << e.what() << "\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cerr << "lbo: error: " << e.what() << "\n";
    return kExitError;
  }
  return kExitError;
}

}  // namespace lbo::orchestrator
