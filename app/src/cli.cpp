#include "cli.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "lbo/cluster/mpi.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/master.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/app/status.hpp"
#include "lbo/orchestrator/stop_signals.hpp"
#include "lbo/orchestrator/version.hpp"
#include "lbo/report/html.hpp"

namespace lbo::orchestrator {

namespace {

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

// The subcommands' arguments, filled in by CLI11.
struct Commands {
  RunOptions run;
  CompareOptions compare;
  std::string status_dir;
  ReportOptions report;
  AddTaskOptions add_task;
  std::string validate_file;
  CLI::App* run_sub = nullptr;
  CLI::App* compare_sub = nullptr;
  CLI::App* status_sub = nullptr;
  CLI::App* report_sub = nullptr;
  CLI::App* add_task_sub = nullptr;
  CLI::App* validate_sub = nullptr;
};

void add_run(CLI::App& app, Commands& c) {
  RunOptions& o = c.run;
  CLI::App* run = c.run_sub = app.add_subcommand("run", "Run a job (rank 0 is the master under mpirun)");
  run->add_option("job", o.job_file, "Job file (TOML)")->required();
  run->add_option("--run-root", o.run_root, "Folder holding run directories")->capture_default_str();
  run->add_flag("--fresh", o.fresh, "Move an existing run directory aside (timestamp suffix) and start anew");
  run->add_option("--local-slots", o.local_slots, "Concurrent trials without mpirun (overrides [workers] local_slots)")
      ->check(CLI::Range(1, 4096));
  run->add_option("--simulate", o.simulate,
                  "Simulate the job's tabulated objective on N virtual slots: trials complete on a virtual clock "
                  "(durations: [workers] simulate_duration), the master's own time counted (overrides [workers] "
                  "simulate)")
      ->type_name("N")
      ->check(CLI::Range(1, jobs::kMaxSimulatedSlots));
  run->add_option("--checkpoint-every", o.checkpoint_every_s,
                  "Seconds between checkpoints, 0.1 to 1e9 (overrides the job's checkpoint_every_s)");
  run->add_flag("--sync", o.sync,
                "Work in rounds: refit on every result before proposing; with a fixed seed the run is "
                "reproducible exactly");
  run->add_option("--deadline", o.deadline,
                  "When the allocation ends: unix seconds, an ISO-8601 date-time (local unless it ends in Z or "
                  "+-HH:MM) or +DURATION from now (+3600, +90m, +1h30m). Trials that would not finish by then "
                  "less grace_s are not started, and the run stops in time (exit 75). Default: LBO_DEADLINE, "
                  "else SLURM's end of the job")
      ->type_name("TIME");
  run->add_flag("--no-lock", o.no_lock,
                "Do not lock the run directory (for filesystems without file locks): you promise that no "
                "other lbo uses it meanwhile");
}

void add_compare(CLI::App& app, Commands& c) {
  CompareOptions& o = c.compare;
  CLI::App* compare = c.compare_sub = app.add_subcommand(
      "compare", "Run a job with each of several surrogates and seeds, then compare them: per task and number of "
                 "trials, each one's mean best with its standard error and the first one's paired advantage "
                 "(<run-root>/<name>-compare/compare.csv and compare.html)");
  compare->add_option("job", o.run.job_file, "Job file (TOML)")->required();
  compare->add_option("--surrogates", o.methods, "Surrogates, comma-separated; the first is compared with each other one")
      ->delimiter(',')
      ->default_str("lbo,gp,random");
  compare->add_option("--seeds", o.seeds, "Runs per surrogate, with seeds seed, seed + 1, ... of the job file")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  compare->add_option("--run-root", o.run.run_root, "Folder holding the comparison's folder")->capture_default_str();
  compare->add_option("--local-slots", o.run.local_slots, "Concurrent trials of each run without mpirun")
      ->check(CLI::Range(1, 4096));
  compare->add_option("--simulate", o.run.simulate, "Simulate each run on N virtual slots (as lbo run --simulate)")
      ->type_name("N")
      ->check(CLI::Range(1, jobs::kMaxSimulatedSlots));
  compare->add_flag("--sync", o.run.sync, "Each run in rounds, reproducible exactly (as lbo run --sync)");
  compare->add_flag("--no-lock", o.run.no_lock, "Do not lock the run directories (as lbo run --no-lock)");
}

void add_add_task(CLI::App& app, Commands& c) {
  AddTaskOptions& o = c.add_task;
  CLI::App* add = c.add_task_sub = app.add_subcommand(
      "add-task", "Add a task (a new dataset) to a run: a running master picks it up within seconds");
  add->add_option("run_dir", o.run_dir, "Run directory, e.g. runs/quickstart")->required();
  add->add_option("--name", o.name, "Task name (letters, digits, '.', '_', '-')")->required();
  add->add_option("--dataset", o.dataset, "The task's dataset (the objective's {dataset})");
  add->add_option("--budget", o.budget, "Trials for the task (default: [schedule] default_budget)")
      ->check(CLI::Range(1, jobs::kMaxBudget));
  add->add_flag("--no-lock", o.no_lock,
                "Do not lock the run directory (for filesystems without file locks): always hand the task "
                "over as a request, which a running master takes within seconds and a stopped run at its "
                "next start");
}

void add_status_and_report(CLI::App& app, Commands& c) {
  c.status_sub = app.add_subcommand("status", "Summarize a run directory (safe while it runs)");
  c.status_sub->add_option("run_dir", c.status_dir, "Run directory, e.g. runs/quickstart")->required();
  c.report_sub = app.add_subcommand(
      "report", "Write a run's report.html (plots of its trials, tasks, workers and model), or one page for several runs");
  c.report_sub->add_option("run_dirs", c.report.run_dirs, "Run directories, e.g. runs/quickstart")->required();
  c.report_sub->add_option("-o,--output", c.report.out,
                           "The page to write (default: <run>/report.html; required with several runs)");
}

// The chosen command; what it throws is mapped to an exit status by run_cli.
int dispatch(Commands& c, int argc, char** argv, cluster::MpiSession* mpi) {
  if (*c.run_sub) {
    c.run.resume_command = resume_command(argc, argv, mpi != nullptr && mpi->size() > 1);
    return run_command(c.run, mpi);
  }
  if (*c.compare_sub) {
    if (c.compare.methods.empty()) c.compare.methods = {"lbo", "gp", "random"};
    c.compare.run.resume_command = resume_command(argc, argv, mpi != nullptr && mpi->size() > 1);
    return compare_command(c.compare, mpi);
  }
  if (*c.status_sub) {
    std::cout << status_report(c.status_dir);
    return kExitDone;
  }
  if (*c.report_sub) return report_command(c.report);
  if (*c.add_task_sub) return add_task_command(c.add_task);
  if (*c.validate_sub) return validate_command(c.validate_file);
  return kExitError;
}

}  // namespace

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

int run_cli(int argc, char** argv, cluster::MpiSession* mpi) {
  CLI::App app{"lbo: lifelong Bayesian optimisation of costly objectives on local slots or MPI ranks"};
  app.set_version_flag("--version", "lbo " + std::string(lbo_version()));
  app.require_subcommand(1);

  Commands commands;
  add_run(app, commands);
  add_compare(app, commands);
  add_status_and_report(app, commands);
  add_add_task(app, commands);
  commands.validate_sub = app.add_subcommand("validate", "Check a job file without running it");
  commands.validate_sub->add_option("job", commands.validate_file, "Job file (TOML)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? kExitDone : kExitBadInput;
  }

  // Only runs stop gracefully; the other commands take a stop signal's default action.
  if (!*commands.run_sub && !*commands.compare_sub) release_stop_signals();
  try {
    return dispatch(commands, argc, argv, mpi);
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
