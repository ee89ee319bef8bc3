#include <algorithm>
#include <cmath>

#include "sections.hpp"

namespace lbo::jobs::job_file {

namespace {

template <class Enum>
std::optional<Enum> one_of(std::string_view name, std::initializer_list<Enum> values) {
  for (Enum v : values) {
    if (to_string(v) == name) return v;
  }
  return std::nullopt;
}

// surrogate, acquisition and initial_random, with the defaults a surrogate brings.
void read_model_choice(Reader& r, const toml::table& t, PolicySpec& policy) {
  const std::string prefix = "policy";
  if (const auto surrogate = r.get_string(t, "surrogate", prefix, false)) {
    const std::span<const SurrogateTraits> catalog = surrogate_catalog();
    const auto known = std::find_if(catalog.begin(), catalog.end(), [&](const SurrogateTraits& m) { return m.name == *surrogate; });
    if (known != catalog.end()) {
      policy.surrogate = known->kind;
    } else {
      std::string names;
      for (std::size_t i = 0; i < catalog.size(); ++i) {
        names += std::string(i == 0 ? "" : i + 1 == catalog.size() ? " or " : ", ") + in_quotes(std::string(catalog[i].name));
      }
      r.error(*t.get("surrogate"), "policy.surrogate", in_quotes(*surrogate) + " is not a surrogate; use " + names);
    }
  }
  const SurrogateTraits& model = traits_of(policy.surrogate);
  // LiBO's kernel is learned from its tasks' forced exploration: on unless initial_random says.
  if (model.libo_exploration && !t.contains("initial_random")) policy.libo_exploration = true;
  // JUMBO's acquisition is UCB in the paper: its default unless the job says otherwise.
  if (model.acquisition) policy.acquisition = *model.acquisition;
  policy.output_warping = model.output_warping;
  if (const auto acquisition = r.get_string(t, "acquisition", prefix, false)) {
    if (const auto kind = one_of<AcquisitionKind>(
            *acquisition, {AcquisitionKind::ucb, AcquisitionKind::ei, AcquisitionKind::pi, AcquisitionKind::hedge})) {
      policy.acquisition = *kind;
    } else {
      r.error(*t.get("acquisition"), "policy.acquisition",
              in_quotes(*acquisition) + " is not an acquisition; use \"ucb\", \"ei\", \"pi\" or \"hedge\"");
    }
  }
  if (const toml::node* initial = t.get("initial_random"); initial && initial->is_string()) {
    if (initial->value_exact<std::string>() == std::optional<std::string>("libo")) {
      policy.libo_exploration = true;
    } else {
      r.error(*initial, "policy.initial_random", "must be a number >= 0 or \"libo\"");
    }
  } else if (const auto n = r.get_int_in(t, "initial_random", prefix, false, 0, 1'000'000,
                                         "must be between 0 and 1000000 or \"libo\"")) {
    policy.initial_random = *n;
  }
}

// Run directories (or their places, for messages) whose finished tasks the model learns from.
void read_warm_start(Reader& r, const toml::table& t, PolicySpec& policy) {
  const toml::node* warm = t.get("warm_start");
  if (warm == nullptr) return;
  const toml::array* runs = warm->as_array();
  if (runs == nullptr) {
    r.error(*warm, "policy.warm_start", "must be an array of run directories or CSV files, e.g. [\"runs/older-run\", \"history.csv\"]");
    return;
  }
  for (std::size_t i = 0; i < runs->size(); ++i) {
    const toml::node& entry = *runs->get(i);
    const std::string key = "policy.warm_start[" + std::to_string(i) + "]";
    const auto text = entry.value_exact<std::string>();
    if (!text) {
      r.error(entry, key, "must be a string naming a run directory or a CSV file");
      continue;
    }
    // Whether it holds a run, or is a CSV file of evaluations, is the orchestrator's to say.
    policy.warm_start.push_back(r.resolve(*text));
    policy.warm_start_places.push_back(r.place(entry.source(), key));
  }
}

// UCB's β, EI's and PI's ξ, the output warping, GP-Hedge's η and memory.
void read_acquisition_settings(Reader& r, const toml::table& t, PolicySpec& policy) {
  const std::string prefix = "policy";
  if (const toml::node* beta = t.get("ucb_beta")) {
    if (beta->value_exact<std::string>() == std::optional<std::string>("schedule")) {
      policy.ucb_beta.reset();
    } else if (const auto value = r.get_number(t, "ucb_beta", prefix, false); value && *value > 0) {
      policy.ucb_beta = *value;
    } else {
      r.error(*beta, "policy.ucb_beta", "must be \"schedule\" or a number > 0");
    }
  }
  r.positive(t, prefix, "ucb_scale", policy.ucb_scale);
  if (r.positive(t, prefix, "ucb_delta", policy.ucb_delta) && policy.ucb_delta >= 1) {
    r.error(*t.get("ucb_delta"), "policy.ucb_delta", "must be in (0, 1)");
  }
  if (const auto xi = r.get_number(t, "xi", prefix, false)) {
    if (*xi < 0 || !std::isfinite(*xi)) {
      r.error(*t.get("xi"), "policy.xi", "must be >= 0");
    } else {
      policy.xi = *xi;
    }
  }
  if (const auto warping = r.get_string(t, "output_warping", prefix, false)) {
    if (const auto kind = one_of<OutputWarping>(
            *warping, {OutputWarping::none, OutputWarping::copula, OutputWarping::copula_below_median, OutputWarping::yeo_johnson})) {
      policy.output_warping = *kind;
    } else {
      r.error(*t.get("output_warping"), "policy.output_warping", in_quotes(*warping) + " is not a warping; use \"none\", \"copula\", \"copula_below_median\" or \"yeo_johnson\"");
    }
  }
  r.positive(t, prefix, "hedge_eta", policy.hedge_eta);
  if (const auto memory = r.get_number(t, "hedge_memory", prefix, false)) {
    if (!(*memory >= 0 && *memory <= 1)) {
      r.error(*t.get("hedge_memory"), "policy.hedge_memory", "must be in [0, 1]");
    } else {
      policy.hedge_memory = *memory;
    }
  }
}

// The maximizer's effort, threads, and the settings of particular models.
void read_model_settings(Reader& r, const toml::table& t, PolicySpec& policy) {
  const std::string prefix = "policy";
  if (const auto n = r.get_int_in(t, "candidates", prefix, false, 1, 1'000'000, "must be in 1..1000000")) policy.candidates = *n;
  if (const auto n = r.get_int_in(t, "refine", prefix, false, 0, 1000, "must be in 0..1000")) policy.refine = *n;
  if (const auto n = r.get_int_in(t, "transfer_best", prefix, false, 0, 1'000'000, "must be in 0..1000000")) {
    policy.transfer_best = *n;
  }
  if (const auto choice = r.get_string(t, "transfer_best_choice", prefix, false)) {
    if (const auto kind = one_of<TransferBestChoice>(*choice, {TransferBestChoice::recent, TransferBestChoice::portfolio})) {
      policy.transfer_best_choice = *kind;
    } else {
      r.error(*t.get("transfer_best_choice"), "policy.transfer_best_choice",
              in_quotes(*choice) + " is not a choice; use \"recent\" or \"portfolio\"");
    }
  }
  if (const auto n = r.get_int_in(t, "fit_threads", prefix, false, 1, 1024, "must be in 1..1024")) policy.fit_threads = *n;
  if (const auto n = r.get_int_in(t, "max_fit_results", prefix, false, 10, 1'000'000, "must be in 10..1000000")) {
    policy.max_fit_results = *n;
  }
  if (const auto n = r.get_int_in(t, "network_width", prefix, false, 1, 4096, "must be in 1..4096")) policy.network_width = *n;
  if (const auto n = r.get_int_in(t, "network_depth", prefix, false, 1, 32, "must be in 1..32")) policy.network_depth = *n;
  if (const auto n = r.get_int_in(t, "networks", prefix, false, 1, 100, "must be in 1..100")) policy.networks = *n;
  r.positive(t, prefix, "ibp_alpha", policy.ibp_alpha);
  if (const auto residual = r.get_bool(t, "residual_gp", prefix)) policy.residual_gp = *residual;
  if (const auto transfer = r.get_bool(t, "transfer_gp", prefix)) policy.transfer_gp = *transfer;
  if (const auto share = r.get_bool(t, "libo_full_share", prefix)) policy.libo_full_share = *share;
  if (const auto on = r.get_bool(t, "libo_gp_switch", prefix)) policy.libo_gp_switch = *on;
  if (const auto threshold = r.get_number(t, "jumbo_threshold", prefix, false)) {
    if (!(*threshold >= 0)) {
      r.error(*t.get("jumbo_threshold"), "policy.jumbo_threshold", "must be a number >= 0 (inf: the cold GP alone)");
    } else {
      policy.jumbo_threshold = *threshold;
    }
  }
  if (const auto on = r.get_bool(t, "jumbo_cold_switch", prefix)) policy.jumbo_cold_switch = *on;
}

}  // namespace

void read_policy(Reader& r, const toml::table& t, JobSpec& job) {
  r.check_keys(t, "policy",
               {"surrogate", "acquisition", "initial_random", "ucb_beta", "ucb_scale", "ucb_delta", "xi", "hedge_eta",
                "candidates", "refine", "network_width", "network_depth", "networks", "ibp_alpha", "warm_start",
                "residual_gp", "transfer_gp", "fit_threads", "transfer_best", "hedge_memory", "libo_full_share",
                "jumbo_threshold", "jumbo_cold_switch", "libo_gp_switch", "output_warping", "max_fit_results",
                "transfer_best_choice"});
  read_model_choice(r, t, job.policy);
  read_warm_start(r, t, job.policy);
  read_acquisition_settings(r, t, job.policy);
  read_model_settings(r, t, job.policy);
}

}  // namespace lbo::jobs::job_file
