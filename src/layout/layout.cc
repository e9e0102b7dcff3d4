#include "shardwise/layout/layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "shardwise/common/checked_math.h"
#include "shardwise/common/input_policy.h"
#include "shardwise/layout/expert_placement.h"

namespace shardwise {

int64_t Layout::AttentionDp() const {
  const int64_t inner = tp * cp;
  const int64_t group = etp > 0 ? ep * etp : ep;
  return group > inner ? group / inner : 1;
}

std::string Layout::ToString() const {
  std::string out;
  auto add = [&](const char* name, int64_t degree) {
    if (degree > 1) out += fmt::format("{}{}", name, degree);
  };
  add("dp", dp);
  add("tp", tp);
  add("cp", cp);
  add("pp", pp);
  add("ep", ep);
  add("etp", etp);
  return out.empty() ? "tp1" : out;
}

namespace {
constexpr int64_t kMaxLayoutGpus = 1'000'000;
// The largest TP degree an error lists among those that divide a model's heads.
constexpr int64_t kMaxSuggestedTp = 64;

// An explicit etp: the expert group ep x etp spans whole TP x CP groups of attention-DP ranks
// (dp set to it when not given). An etp that tp, cp and ep imply already (etp1 over pure EP,
// or the expert-TP of ep below tp x cp) is dropped, so one layout has one name.
Status CheckExpertTp(std::string_view text, Layout& layout, bool seen_dp) {
  const int64_t inner = layout.tp * layout.cp;
  const int64_t group = layout.ep * layout.etp;
  if (group < inner || group % inner != 0) {
    return Error(fmt::format(
        "layout '{}': ep x etp ({} x {}) must be a multiple of tp x cp ({}); an expert group "
        "spans whole attention ranks (without etp, ep below tp x cp splits experts over it)",
        Printable(text), layout.ep, layout.etp, inner));
  }
  if (!seen_dp) layout.dp = group / inner;
  Layout derived = layout;
  derived.etp = 0;
  if (derived.AttentionDp() == layout.AttentionDp() && derived.ExpertTp() == layout.ExpertTp()) {
    layout.etp = 0;
  }
  return Status();
}

}  // namespace

StatusOr<Layout> ParseLayout(std::string_view text) {
  Layout layout;
  bool seen_dp = false;
  bool seen[6] = {false, false, false, false, false, false};
  size_t i = 0;
  const std::string hint = "write degrees like tp8pp2, ep16, tp4ep8dp2 or dp2tp4cp2";
  if (text.empty()) return Error("empty layout; " + hint);
  if (text.size() > 64)
    return Error(fmt::format("layout '{}' is too long; {}", Printable(text), hint));
  while (i < text.size()) {
    if (i + 2 > text.size()) return Error(fmt::format("layout '{}': {}", Printable(text), hint));
    // Only ASCII letters are lowered: std::tolower of a negative char is undefined.
    auto lower = [](char ch) {
      return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch;
    };
    const size_t word = i;
    std::string name{lower(text[i]), lower(text[i + 1])};
    i += 2;
    if (name == "et" && i < text.size() && lower(text[i]) == 'p') {
      name = "etp";
      ++i;
    }
    static constexpr std::string_view kNames[] = {"dp", "tp", "pp", "ep", "cp", "etp"};
    const auto known = std::find(std::begin(kNames), std::end(kNames), name);
    if (known == std::end(kNames)) {
      // Named as written: the run of characters up to the next digit ("foo", not "fo").
      size_t end = word;
      while (end < text.size() && !std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
      return Error(fmt::format("layout '{}': unknown degree '{}'; use dp, tp, pp, ep, cp, etp",
                               Printable(text), Printable(text.substr(word, end - word))));
    }
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (start == i) {
      return Error(fmt::format("layout '{}': '{}' needs a degree after it; {}", Printable(text),
                               Printable(name), hint));
    }
    if (i - start > 7) {
      return Error(
          fmt::format("layout '{}': the degree of '{}' is too large (at most {} GPUs in "
                      "all)",
                      Printable(text), Printable(name), kMaxLayoutGpus));
    }
    const int64_t degree = std::stoll(std::string(text.substr(start, i - start)));
    if (degree < 1) {
      return Error(fmt::format("layout '{}': degrees must be at least 1", Printable(text)));
    }
    // In kNames' order.
    int64_t* slots[6] = {&layout.dp, &layout.tp, &layout.pp, &layout.ep, &layout.cp, &layout.etp};
    const size_t k = static_cast<size_t>(known - std::begin(kNames));
    if (seen[k]) {
      return Error(fmt::format("layout '{}': '{}' appears twice", Printable(text), name));
    }
    seen[k] = true;
    *slots[k] = degree;
    if (name == "dp") seen_dp = true;
  }
  // Every product below stays far from overflow once the GPU count is bounded (ep and etp have
  // at most seven digits each).
  const std::optional<int64_t> gpus = CheckedProduct({layout.dp, layout.tp, layout.pp, layout.cp});
  if (!gpus || *gpus > kMaxLayoutGpus) {
    return Error(fmt::format("layout '{}' is too large: at most {} GPUs in all", Printable(text),
                             kMaxLayoutGpus));
  }
  const int64_t inner = layout.tp * layout.cp;
  if (layout.etp > 0) SW_RETURN_IF_ERROR(CheckExpertTp(text, layout, seen_dp));
  // "ep16" alone is dp16ep16: the expert group spans data-parallel replicas of attention.
  if (!seen_dp && layout.etp == 0 && layout.ep > inner) {
    if (layout.ep % inner != 0) {
      return Error(fmt::format("layout '{}': ep ({}) must be a multiple of tp x cp ({})", text,
                               layout.ep, inner));
    }
    layout.dp = layout.ep / inner;
  }
  if (layout.StageRanks() % layout.ep != 0) {
    return Error(
        fmt::format("layout '{}': ep ({}) must divide dp x tp x cp ({}); EP uses the "
                    "ranks of one pipeline stage",
                    text, layout.ep, layout.StageRanks()));
  }
  if (layout.etp > 0 && layout.StageRanks() % (layout.ep * layout.etp) != 0) {
    return Error(fmt::format(
        "layout '{}': ep x etp ({}) must divide dp x tp x cp ({}); the expert group uses the "
        "ranks of one pipeline stage",
        Printable(text), layout.ep * layout.etp, layout.StageRanks()));
  }
  if (layout.etp == 0 && layout.ep > inner && layout.ep % inner != 0) {
    return Error(fmt::format("layout '{}': ep ({}) above tp x cp ({}) must be a multiple of it",
                             text, layout.ep, inner));
  }
  if (layout.etp == 0 && layout.ep < inner && inner % layout.ep != 0) {
    return Error(
        fmt::format("layout '{}': ep ({}) below tp x cp ({}) must divide it (each "
                    "expert is split over tp x cp / ep ranks)",
                    text, layout.ep, inner));
  }
  if (layout.gpus() > kMaxLayoutGpus) {
    return Error(fmt::format("layout '{}' is too large: at most {} GPUs in all", Printable(text),
                             kMaxLayoutGpus));
  }
  return layout;
}

Status ValidateLayout(const Layout& l, const ModelSpec& m, int64_t redundant_experts) {
  const std::string name = l.ToString();
  if (m.num_heads % l.tp != 0) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= std::min<int64_t>(m.num_heads, kMaxSuggestedTp); ++d) {
      if (m.num_heads % d == 0) divisors.push_back(d);
    }
    return Error(fmt::format("{}: tp ({}) must divide {}'s {} attention heads; use tp {}", name,
                             l.tp, m.name, m.num_heads, fmt::join(divisors, ", ")));
  }
  if (m.num_moe_layers() < m.num_layers() && m.intermediate_size % l.tp != 0) {
    return Error(
        fmt::format("{}: tp ({}) must divide the FFN width ({})", name, l.tp, m.intermediate_size));
  }
  if (m.recurrent && m.num_recurrent_layers() > 0) {
    if (m.recurrent->num_heads % l.tp != 0) {
      return Error(fmt::format("{}: tp ({}) must divide {}'s {} linear-attention/SSM heads", name,
                               l.tp, m.name, m.recurrent->num_heads));
    }
    if (l.cp > 1) {
      return Error(
          fmt::format("{}: context parallelism does not split {}'s recurrent "
                      "(linear-attention/SSM) layers; drop cp",
                      name, m.name));
    }
  }
  if (l.pp > m.num_layers()) {
    return Error(
        fmt::format("{}: pp ({}) exceeds {}'s {} layers", name, l.pp, m.name, m.num_layers()));
  }
  if (!m.is_moe()) {
    if (l.etp > 0) {
      return Error(fmt::format("{}: etp ({}) splits experts; {} is dense and has none", name, l.etp,
                               m.name));
    }
    if (l.ep > 1) {
      return Error(fmt::format("{}: ep ({}) needs a mixture-of-experts model; {} is dense", name,
                               l.ep, m.name));
    }
    return Status();
  }
  // Each expert group is whole TP x CP groups, or splits one evenly (Layout::ExpertTp).
  const int64_t inner = l.tp * l.cp;
  const int64_t group = l.ep * (l.etp > 0 ? l.etp : 1);
  if ((group > inner ? group % inner : inner % group) != 0 || l.dp % l.AttentionDp() != 0) {
    return Error(
        fmt::format("{}: ep ({}) must divide tp x cp ({}) or be a multiple of it that "
                    "divides dp x tp x cp",
                    name, l.ep, inner));
  }
  // Redundant copies live on the ranks of an expert group; without EP every expert is whole
  // on every rank and there is nothing to replicate.
  const int64_t redundant = l.ep > 1 ? redundant_experts : 0;
  if (redundant == 0 && m.moe.num_experts % l.ep != 0) {
    return Error(
        fmt::format("{}: ep ({}) must divide {}'s {} experts (serving commands may instead "
                    "add --redundant-experts so experts + redundant divide by ep)",
                    name, l.ep, m.name, m.moe.num_experts));
  }
  if (redundant != 0) SW_RETURN_IF_ERROR(PlaceExperts(m.moe.num_experts, l.ep, redundant).status());
  if (m.moe.expert_intermediate_size % l.ExpertTp() != 0) {
    return Error(
        fmt::format("{}: the {} ranks splitting each expert must divide its FFN width "
                    "({}); raise ep",
                    name, l.ExpertTp(), m.moe.expert_intermediate_size));
  }
  return Status();
}

}  // namespace shardwise
