#include "traces/chakra/chakra_import.h"

#include <algorithm>
#include <filesystem>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "common/error.h"
#include "traces/chakra/chakra_export.h"
#include "traces/chakra/chakra_foreign.h"
#include "traces/chakra/chakra_io.h"
#include "traces/gen/model_presets.h"
#include "traces/trace_io.h"
#include "traces/trace_validator.h"

namespace ispsim::chakra {

namespace {

std::string str(uint64_t v) { return std::to_string(v); }

ImportReport restore(ChakraReader& reader, const AttributeProto& header_attr, const std::string& trace_path) {
  trace::Header header;
  if (!header.ParseFromString(header_attr.bytes_val()))
    throw BadInput(reader.path(), std::string("GlobalMetadata attribute ") + kHeaderAttr +
                                      " is not an ispsim trace header");
  ImportReport report;
  report.restored = true;
  trace::TraceWriter writer(trace_path, header);
  Node node;
  trace::Op op;
  while (reader.next(node)) {
    ++report.nodes;
    const AttributeProto* a = find_attr(node, kOpAttr);
    if (!a || !op.ParseFromString(a->bytes_val()))
      throw BadInput(reader.path(), "node " + str(node.id()) + " has no valid " + kOpAttr +
                                        " attribute (an ispsim export holds one per node)");
    writer.write(op);
    ++report.mapped[op_kind_name(op)];
  }
  writer.close();
  report.ops = writer.ops_written();
  return report;
}

// Every node's dependencies (data and control), by index into `nodes`.
std::vector<std::vector<size_t>> dependency_indices(const std::vector<Node>& nodes, const std::string& where) {
  std::unordered_map<uint64_t, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!index.emplace(nodes[i].id(), i).second) throw BadInput(where, "node id " + str(nodes[i].id()) + " twice");
  std::vector<std::vector<size_t>> deps(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto* list : {&nodes[i].data_deps(), &nodes[i].ctrl_deps()})
      for (uint64_t id : *list) {
        const auto it = index.find(id);
        if (it == index.end())
          throw BadInput(where, "node " + str(nodes[i].id()) + " depends on node " + str(id) +
                                    ", which is not in the file");
        deps[i].push_back(it->second);
      }
    std::sort(deps[i].begin(), deps[i].end());
    deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
  }
  return deps;
}

// Node indices in dependency order; among ready nodes the smallest id first.
std::vector<size_t> topological_order(const std::vector<Node>& nodes, const std::vector<std::vector<size_t>>& deps,
                                      const std::string& where) {
  std::vector<size_t> waiting(nodes.size());
  std::vector<std::vector<size_t>> dependants(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    waiting[i] = deps[i].size();
    for (size_t d : deps[i]) dependants[d].push_back(i);
  }
  auto later = [&nodes](size_t a, size_t b) { return nodes[a].id() > nodes[b].id(); };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> ready(later);
  for (size_t i = 0; i < nodes.size(); ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t d : dependants[i])
      if (--waiting[d] == 0) ready.push(d);
  }
  if (order.size() != nodes.size()) throw BadInput(where, "the node dependencies form a cycle");
  return order;
}

// Assigns program positions to the mapped ops of one foreign inference in
// dependency order: phase from the token rows, layer and decode step from the
// count of attentions (one per layer and pass), and a KV append per attention.
class Sequencer {
 public:
  Sequencer(const trace::ModelShape& model, const std::string& where) : model_(model), where_(where) {}

  // Adds `mapped` (depending on the ispsim ops `deps`); returns its op id.
  uint64_t add(MappedNode mapped, const std::vector<uint64_t>& deps, const Node& node);
  const std::vector<trace::Op>& ops() const { return ops_; }
  // The header's request and program, once every op is added.
  trace::Header header(const std::string& source, const std::string& shape);
  uint64_t prompt_tokens() const { return prompt_tokens_; }
  uint64_t decode_steps() const { return (decode_attentions_ + model_.layers() - 1) / model_.layers(); }

 private:
  void place(trace::Op& op, const MappedNode& mapped, const Node& node);
  uint64_t add_kv_append(const trace::Op& attention, const std::vector<uint64_t>& deps);

  const trace::ModelShape& model_;
  std::string where_;
  std::vector<trace::Op> ops_;
  bool decoding_ = false;
  uint64_t prefill_attentions_ = 0, decode_attentions_ = 0;
  uint64_t prompt_tokens_ = 0, max_kv_tokens_ = 0, max_step_plus_one_ = 0;
  uint64_t step_ = 0;         // decode step of the last attention
  bool step_closed_ = false;  // its LM head was seen
};

void Sequencer::place(trace::Op& op, const MappedNode& mapped, const Node& node) {
  // An LM head ends a pass whatever its rows (a prefill may keep only the last row's logits).
  const uint64_t rows = op.has_lm_head() ? 0 : mapped.rows;
  if (rows > 1 && decoding_)
    throw BadInput(where_, "node " + str(node.id()) + " (" + node.name() + "): a prefill of " + str(rows) +
                               " tokens after decode steps (one request per trace is imported)");
  decoding_ = decoding_ || rows == 1;
  op.set_phase(decoding_ ? trace::PHASE_DECODE : trace::PHASE_FULL_PREFILL);
  uint64_t& attentions = decoding_ ? decode_attentions_ : prefill_attentions_;
  if (op.has_attention()) {
    op.set_layer(uint32_t(attentions % model_.layers()));
    if (!decoding_) prompt_tokens_ = std::max(prompt_tokens_, op.attention().query_rows());
    max_kv_tokens_ = std::max(max_kv_tokens_, op.attention().kv(0).tokens().end());
  }
  if (decoding_) {
    // An attention's step counts the layers; the LM head closes its step and the
    // ops after it open the next.
    if (op.has_attention()) step_ = attentions / model_.layers(), step_closed_ = false;
    op.set_decode_step(uint32_t(step_ + (step_closed_ ? 1 : 0)));
    step_closed_ = step_closed_ || op.has_lm_head();
    max_step_plus_one_ = std::max(max_step_plus_one_, uint64_t(op.decode_step()) + 1);
  }
  if (op.has_attention()) ++attentions;
}

uint64_t Sequencer::add_kv_append(const trace::Op& attention, const std::vector<uint64_t>& deps) {
  trace::Op append;
  append.set_id(ops_.size());
  append.set_layer(attention.layer());
  append.set_phase(attention.phase());
  if (attention.has_decode_step()) append.set_decode_step(attention.decode_step());
  for (uint64_t d : deps) append.add_deps(d);
  append.set_label("kv_append (implied by the attention)");
  const uint64_t end = attention.attention().kv(0).tokens().end();
  const uint64_t rows = std::min(attention.attention().query_rows(), end);
  trace::KvTransfer* kv = append.mutable_kv_append();
  kv->mutable_tokens()->set_begin(end - rows);
  kv->mutable_tokens()->set_end(end);
  kv->set_bytes(rows * model_.kv_heads() * model_.head_dim() * 2 * model_.kv_bits() / 8);
  kv->set_region(trace::KV_REGION_APPENDED);
  kv->set_parts(trace::KV_PARTS_K_AND_V);
  ops_.push_back(append);
  return append.id();
}

uint64_t Sequencer::add(MappedNode mapped, const std::vector<uint64_t>& deps, const Node& node) {
  trace::Op op = *mapped.op;
  place(op, mapped, node);
  std::vector<uint64_t> all = deps;
  if (op.has_attention()) all.push_back(add_kv_append(op, deps));
  op.set_id(ops_.size());
  op.set_label(node.name());
  for (uint64_t d : all) op.add_deps(d);
  ops_.push_back(op);
  return op.id();
}

trace::Header Sequencer::header(const std::string& source, const std::string& shape) {
  trace::Header h;
  h.mutable_version()->set_major(trace::kFormatMajor);
  h.mutable_version()->set_minor(trace::kFormatMinor);
  *h.mutable_model() = model_;
  const bool prefill = prefill_attentions_ > 0 || !decoding_;
  // Decode-only: the context is what the first step attends to before its own token.
  uint64_t context = prompt_tokens_;
  if (!prefill) {
    context = UINT64_MAX;
    for (const trace::Op& op : ops_)
      if (op.has_attention()) context = std::min(context, op.attention().kv(0).tokens().end() - 1);
    if (context == UINT64_MAX) context = 0;
  }
  trace::Request* r = h.mutable_request();
  if (context > 0) {
    trace::Document* d = r->add_documents();
    d->set_name(prefill ? "prompt" : "context");
    d->set_tokens(context);
  }
  r->set_answer_tokens(std::max({decode_steps(), max_step_plus_one_,
                                 max_kv_tokens_ > context ? max_kv_tokens_ - context : 0}));
  r->set_kv_format(trace::KV_FP16);
  trace::Producer* p = h.mutable_producer();
  p->set_kind(trace::PRODUCER_CHAKRA_IMPORT);
  p->set_tool("ispsim trace chakra-import");
  for (const auto& [key, value] : {std::pair<const char*, std::string>{"source", source}, {"shape", shape}}) {
    trace::Setting* s = p->add_settings();
    s->set_key(key);
    s->set_value(value);
  }
  h.add_programs()->set_program(prefill ? trace::FULL_PREFILL : trace::DECODE_ONLY);
  return h;
}

ImportReport import_foreign(ChakraReader& reader, const std::string& trace_path, const ImportOptions& options) {
  const std::string& where = reader.path();
  if (options.shape.empty())
    throw BadInput(where, "not an ispsim export: give the model's shape with --shape (" +
                              tracegen::model_preset_names() + ")");
  trace::ModelShape model = tracegen::find_model_preset(options.shape, "--shape");
  std::vector<Node> nodes;
  for (Node node; reader.next(node);) nodes.push_back(node);
  const std::vector<std::vector<size_t>> deps = dependency_indices(nodes, where);
  ImportReport report;
  report.nodes = nodes.size();
  Sequencer sequencer(model, where);
  std::vector<std::vector<uint64_t>> stands_for(nodes.size());  // the ispsim ops a node's dependants wait for
  for (size_t i : topological_order(nodes, deps, where)) {
    std::vector<uint64_t> op_deps;
    for (size_t d : deps[i]) op_deps.insert(op_deps.end(), stands_for[d].begin(), stands_for[d].end());
    std::sort(op_deps.begin(), op_deps.end());
    op_deps.erase(std::unique(op_deps.begin(), op_deps.end()), op_deps.end());
    MappedNode mapped = map_node(nodes[i], model, where + ": node " + str(nodes[i].id()));
    if (!mapped.op) {
      ++report.unsupported[mapped.unsupported];
      stands_for[i] = std::move(op_deps);  // an unmapped node passes its dependencies on
      continue;
    }
    stands_for[i] = {sequencer.add(std::move(mapped), op_deps, nodes[i])};
  }
  if (sequencer.ops().empty())
    throw BadInput(where, "no node maps onto an op ispsim models (" + str(nodes.size()) + " nodes, " +
                              str(report.unsupported.size()) + " operators not modelled)");
  const trace::Header header = sequencer.header(std::filesystem::path(where).filename(), model.name());
  trace::TraceWriter writer(trace_path, header);
  for (trace::Op op : sequencer.ops()) {
    op.set_program(header.programs(0).program());  // known only once every op is placed
    writer.write(op);
    ++report.mapped[op_kind_name(op)];
  }
  writer.close();
  report.ops = writer.ops_written();
  report.prompt_tokens = sequencer.prompt_tokens();
  report.decode_steps = sequencer.decode_steps();
  return report;
}

}  // namespace

ImportReport import_chakra(const std::string& chakra_path, const std::string& trace_path,
                           const ImportOptions& options) {
  ChakraReader reader(chakra_path);
  if (const AttributeProto* header = find_attr(reader.metadata(), kHeaderAttr))
    return restore(reader, *header, trace_path);
  return import_foreign(reader, trace_path, options);
}

std::string ImportReport::format() const {
  std::ostringstream s;
  uint64_t unmapped = 0;
  for (const auto& [name, count] : unsupported) unmapped += count;
  s << (restored ? "restored an ispsim export: " : "imported: ") << nodes << " nodes -> " << ops << " ops (";
  bool first = true;
  for (const auto& [kind, count] : mapped) s << (first ? "" : ", ") << count << " " << kind, first = false;
  s << ")";
  if (!restored)
    s << "; prompt " << prompt_tokens << " tokens, " << decode_steps << " decode steps; " << unmapped
      << " nodes not modelled";
  s << "\n";
  for (const auto& [name, count] : unsupported) s << "not modelled: " << name << " (" << count << " nodes)\n";
  return s.str();
}

}  // namespace ispsim::chakra
