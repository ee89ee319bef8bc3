#include "cli.hpp"

#include <filesystem>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "lbo/cluster/local_transport.hpp"
#include "lbo/cluster/mpi.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/master.hpp"

namespace lbo::orchestrator {

namespace {

struct RunOptions {
  std::string job_file;
  std::string run_root = "runs";
  bool fresh = false;
  std::optional<int> local_slots;
  bool sync = false;
};

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
  RunDirectory run_dir = RunDirectory::create(options.run_root, job, options.fresh);
  if (!run_dir.moved_aside().empty()) console.log("moved the earlier run to " + run_dir.moved_aside().string());
  MasterOptions master_options;
  master_options.sync = options.sync;
  Master master(job, run_dir, std::move(make_transport), console, master_options);
  return master.run();
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
  run_command->add_flag("--sync", run_options.sync,
                        "Work in rounds: refit on every result before proposing; with a fixed seed the run is "
                        "reproducible exactly");

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
    if (*run_command) return run(run_options, mpi);
    if (*validate_command) return validate(validate_file);
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "lbo: error: " << e.what() << "\n";
    return kExitError;
  }
  return kExitError;
}

}  // namespace lbo::orchestrator
