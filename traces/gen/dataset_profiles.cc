#include "traces/gen/dataset_profiles.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common/error.h"

namespace ispsim::tracegen {

namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The mu whose truncated lognormal has mean `mean` (bisection; the truncated
// mean grows monotonically with mu).
double solve_log_mu(double mean, double sigma, double low, double high) {
  double lo = std::log(low) - 10.0 * sigma, hi = std::log(high) + 10.0 * sigma;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (truncated_lognormal_mean(mid, sigma, low, high) < mean ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

struct Lengths {
  double doc_mean, sigma;
  uint64_t doc_min, doc_max, query_min, query_max, answer_min, answer_max;
};

DatasetProfile profile(const char* key, const char* name, const char* source, const char* unit, const Lengths& l) {
  DatasetProfile p;
  p.key = key;
  p.name = name;
  p.source = source;
  p.retrieval_unit = unit;
  p.doc_mean_tokens = l.doc_mean;
  p.doc_log_sigma = l.sigma;
  p.doc_min_tokens = l.doc_min;
  p.doc_max_tokens = l.doc_max;
  p.doc_log_mu = solve_log_mu(l.doc_mean, l.sigma, double(l.doc_min), double(l.doc_max));
  p.query_min_tokens = l.query_min;
  p.query_max_tokens = l.query_max;
  p.answer_min_tokens = l.answer_min;
  p.answer_max_tokens = l.answer_max;
  return p;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The retrieval unit is one whole document of the dataset (a report page, an
// article, a contract, a policy, a Wikipedia article or web page, a Wikipedia
// paragraph for HotpotQA): MemLLM precomputes one KV cache per document
// (Sec. II-C) and its statements (top-4 CuAD retrieval exceeding 40k tokens,
// Sec. III-A) only hold for whole documents. Document spread: log-space sigma
// 0.70, measured on the two datasets whose files could be read here (COVID-QA
// articles 0.700, TAT-QA contexts 0.717, bytes per document); for the others it
// is an assumption (no dataset publishes its length distribution), which moves
// single draws but not the mean. Ranges are the truncation of the draws.
constexpr double kSigma = 0.70;

}  // namespace

double truncated_lognormal_mean(double mu, double sigma, double low, double high) {
  const double a = (std::log(low) - mu) / sigma, b = (std::log(high) - mu) / sigma;
  const double mass = normal_cdf(b) - normal_cdf(a);
  if (mass <= 0.0) return mu < std::log(low) ? low : high;  // all mass beyond one end
  return std::exp(mu + 0.5 * sigma * sigma) * (normal_cdf(b - sigma) - normal_cdf(a - sigma)) / mass;
}

// Every length below is a published statistic converted with kBytesPerToken or
// kTokensPerWord, a measurement on a published data file (named), or a stated
// estimate where neither exists; the README table repeats them.
const std::vector<DatasetProfile>& dataset_profiles() {
  static const std::vector<DatasetProfile> profiles = {
      // Doc: 687.5 words of text and table per question, max 2,679 (FinQA paper,
      // Chen et al., EMNLP 2021, arXiv:2109.00122, Table 2 statistics, as recalled:
      // the search tool could not show that table; DocFinQA, Reddy et al.,
      // arXiv:2401.06915, abstract, confirms "under 700 words in FinQA") x 4/3 =
      // 917 tokens, max 3,572 tokens. Query: estimate, as TAT-QA's
      // measured questions (same kind of financial questions). Answer: estimate,
      // an executed number such as "-12.6%" is 2-6 BPE tokens.
      profile("fin", "FinQA",
              "Chen et al., FinQA, EMNLP 2021, arXiv:2109.00122 (Table 2: 687.5 words of text and table per question, "
              "max 2,679); answer and query lengths estimated",
              "one earnings-report page: pre-text, one table, post-text",
              {916.7, kSigma, 100, 3572, 8, 28, 2, 6}),
      // Measured on the published dev split (github.com/NExTplusplus/TAT-QA,
      // dataset_raw/tatqa_dataset_dev.json at 870accc: 278 contexts, 1,668
      // questions): contexts (table cells + paragraphs) 1,799.2 bytes = 450 tokens
      // (min 234 B = 58, max 9,360 B = 2,340), questions 71.8 B = 18 tokens,
      // answers 25.8 B = 6.4 tokens.
      profile("tat", "TAT-QA",
              "Zhu et al., TAT-QA, ACL 2021, arXiv:2105.07624; lengths measured on the published dev split "
              "(NExTplusplus/TAT-QA dataset_raw/tatqa_dataset_dev.json): 1,799 B per context, 71.8 B per question, "
              "25.8 B per answer",
              "one hybrid context: a table and its paragraphs",
              {449.8, kSigma, 58, 2340, 8, 28, 2, 11}),
      // Doc: the Hugging Face card of covid_qa_deepset (huggingface/datasets,
      // datasets/covid_qa_deepset/dataset_infos.json): 65,151,262 bytes for 2,019
      // examples, each holding its whole article = 32,268 B = 8,067 tokens
      // (question-weighted). Range: the article sizes of the 200423 release in
      // github.com/deepset-ai/COVID-QA (2,876-67,453 B), widened to 700-20,000
      // tokens. Query 59.6 B = 15 tokens and answer 104.5 B = 26 tokens, measured
      // on that release (1,380 questions).
      profile("cov", "COVID-QA",
              "Moeller et al., COVID-QA, ACL 2020 NLP-COVID workshop; HF card covid_qa_deepset: 65,151,262 B / 2,019 "
              "examples (one article each); question and answer lengths measured on deepset-ai/COVID-QA "
              "data/question-answering/200423_covidQA.json",
              "one CORD-19 scientific article",
              {8067.0, kSigma, 700, 20000, 8, 22, 10, 42}),
      // Doc: the HF card of cuad (huggingface/datasets, datasets/cuad/
      // dataset_infos.json): 1,664,581,107 bytes for 26,632 examples, each holding
      // its whole contract = 62,503 B = 15,626 tokens. Range: contracts run from a
      // few pages to over 100 pages (CUAD paper). Query: the card's templated
      // question ("Highlight the parts (if any) of this contract related to ...
      // Details: ...", 144 characters in its example) = 30-60 tokens. Answer: no
      // published clause length was found; derived from MemLLM's ~90:1 ratio
      // (15,626 / 90 = 174 tokens: about one clause), so the CUAD ratio check holds
      // by construction.
      profile("cad", "CUAD",
              "Hendrycks et al., CUAD, NeurIPS 2021 Datasets, arXiv:2103.06268; HF card cuad: 1,664,581,107 B / "
              "26,632 examples (one contract each); answer length derived from MemLLM Sec. III-A's ~90:1",
              "one commercial contract (SEC EDGAR)",
              {15626.0, kSigma, 1000, 100000, 30, 60, 87, 260}),
      // Doc: PrivacyQA (35 mobile-app policies) publishes no policy length. The
      // privacy policies of 75 popular websites run from 144 to 7,669 words, median
      // 2,514 (McDonald and Cranor, "The Cost of Reading Privacy Policies", I/S 4(3),
      // 2008, cited by the PrivacyQA paper; secondary summaries quote "median around
      // 2,500 words, 144 to 7,669") x 4/3 = 3,352 tokens, range 192-10,225. The
      // median is used as the mean: with sigma 0.7 the mean of such a distribution
      // would be 28 % higher. Query and answer: estimates (short user questions; an
      // answer of one or two evidence sentences).
      profile("prv", "PrivacyQA",
              "Ravichander et al., PrivacyQA, EMNLP 2019, arXiv:1911.00841; policy length from McDonald and Cranor "
              "2008 (median 2,514 words, 144-7,669); query and answer lengths estimated",
              "one privacy policy",
              {3352.0, kSigma, 192, 10225, 5, 20, 20, 60}),
      // Doc: the HF card of trivia_qa (huggingface/datasets, datasets/trivia_qa/
      // README.md): rc.wikipedia train 3,340,800,860 B minus rc.wikipedia.nocontext
      // 48,360,513 B = 3,292,440,347 B of Wikipedia evidence for 61,888 questions
      // = 53,200 B per question, over 1.8 evidence articles per question (TriviaQA
      // paper, Wikipedia domain) = 29,556 B = 7,389 tokens. Query: 14 words on
      // average (paper) = 19 tokens. Answer: no published length; derived from
      // MemLLM's ~1000:1 (7.4 tokens: an entity name; 92.85 % of answers are
      // Wikipedia titles, paper), so the ratio holds by construction.
      profile("wik", "TriviaQA (Wikipedia)",
              "Joshi et al., TriviaQA, ACL 2017, arXiv:1705.03551 (1.8 Wikipedia articles and 14-word questions per "
              "question); HF card trivia_qa rc.wikipedia: 3,292,440,347 B of evidence / 61,888 questions; answer "
              "length derived from MemLLM Sec. III-A's ~1000:1",
              "one Wikipedia article",
              {7389.0, kSigma, 300, 60000, 8, 30, 4, 11}),
      // Doc: trivia_qa rc.web train 9,408,852,131 B minus rc.web.nocontext
      // 58,524,077 B = 9,350,328,054 B for 76,496 questions = 122,233 B per
      // question, over the paper's six evidence documents per question = 20,372 B
      // = 5,093 tokens. Query as wik; answer derived from ~1000:1 (5.1 tokens).
      profile("web", "TriviaQA (web)",
              "Joshi et al., TriviaQA, ACL 2017, arXiv:1705.03551 (six evidence documents per question); HF card "
              "trivia_qa rc.web: 9,350,328,054 B of evidence / 76,496 questions; answer length derived from MemLLM "
              "Sec. III-A's ~1000:1",
              "one web page (search result) or Wikipedia article",
              {5093.0, kSigma, 300, 50000, 8, 30, 3, 7}),
      // Doc: the HF card of hotpot_qa (huggingface/datasets, datasets/hotpot_qa/
      // dataset_infos.json): distractor train 552,949,315 B for 90,447 examples of
      // 10 Wikipedia paragraphs each (2 gold + 8 distractors, paper) = 611 B per
      // paragraph (an upper bound: the question, answer and supporting facts are in
      // the bytes too) = 153 tokens. Query and answer: estimates (multi-hop
      // questions; answers are short spans or yes/no).
      profile("hpt", "HotpotQA",
              "Yang et al., HotpotQA, EMNLP 2018, arXiv:1809.09600 (10 paragraphs per distractor example); HF card "
              "hotpot_qa distractor: 552,949,315 B / 90,447 examples; query and answer lengths estimated",
              "one Wikipedia introductory paragraph",
              {152.8, kSigma, 20, 800, 10, 40, 1, 6}),
  };
  return profiles;
}

std::string dataset_profile_keys() {
  std::string keys;
  for (const DatasetProfile& p : dataset_profiles()) keys += (keys.empty() ? "" : ", ") + p.key;
  return keys;
}

const DatasetProfile& find_dataset_profile(const std::string& key, const std::string& where) {
  for (const DatasetProfile& p : dataset_profiles())
    if (p.key == lower(key)) return p;
  throw BadInput(where, "unknown dataset '" + key + "' (known: " + dataset_profile_keys() + ")");
}

uint64_t draw_document_tokens(const DatasetProfile& profile, SeededRandom& random) {
  // Lognormal(doc_log_mu, sigma), truncated by redrawing: doc_log_mu makes the
  // truncated mean the published one. Every profile's range keeps at least 91 %
  // of the mass (COVID-QA; PrivacyQA 96 %, the others over 98 %), so 64 tries
  // practically never run out (if they do, the last draw is clamped into the range).
  const double sigma = profile.doc_log_sigma;
  const double mu = profile.doc_log_mu;
  double tokens = 0.0;
  for (int attempt = 0; attempt < 64; ++attempt) {
    tokens = std::round(std::exp(mu + sigma * random.standard_normal()));
    if (tokens >= double(profile.doc_min_tokens) && tokens <= double(profile.doc_max_tokens)) break;
  }
  tokens = std::clamp(tokens, double(profile.doc_min_tokens), double(profile.doc_max_tokens));
  return static_cast<uint64_t>(tokens);
}

uint64_t draw_query_tokens(const DatasetProfile& profile, SeededRandom& random) {
  return random.uniform_int(profile.query_min_tokens, profile.query_max_tokens);
}

uint64_t draw_answer_tokens(const DatasetProfile& profile, SeededRandom& random) {
  return random.uniform_int(profile.answer_min_tokens, profile.answer_max_tokens);
}

}  // namespace ispsim::tracegen
