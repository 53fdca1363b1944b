#include "export/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <map>
#include <set>
#include <stdexcept>

#ifndef DIFFLOCO_VERSION
#define DIFFLOCO_VERSION "unknown"
#endif

namespace diffloco::deploy {

namespace {

using torch::jit::Node;
using torch::jit::Value;

constexpr int kOpset = 17;     // LayerNormalization
constexpr int kIrVersion = 8;  // the IR of opset 17 (ONNX 1.12, Debian 12's libonnx)

// Translates the TorchScript graph into an ONNX graph, value by value.
class GraphTranslator {
 public:
  GraphTranslator(const torch::jit::Module& module, onnx::GraphProto& graph)
      : module_(module), graph_(graph) {}

  void translate(const torch::jit::Graph& g) {
    const auto inputs = g.inputs();
    if (inputs.size() != 2)
      throw std::runtime_error("onnx export: forward() must take (self, obs)");
    names_[inputs[1]] = "obs";
    for (const Node* n : g.nodes()) node(*n);
    const Value* out = g.outputs().at(0);
    add("Identity", {name(out)}, "actions");
  }

 private:
  [[noreturn]] void unsupported(const Node& n) {
    throw std::runtime_error("onnx export: forward() uses " + std::string(n.kind().toQualString()) +
                             ", which has no ONNX translation here");
  }

  // The ONNX name of a tensor value; a module attribute becomes an initializer on first use.
  std::string name(const Value* v) {
    const auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    const Node* n = v->node();
    if (n->kind() != c10::prim::GetAttr)
      throw std::runtime_error("onnx export: value %" + v->debugName() + " has no ONNX name");
    const std::string attr = n->s(c10::attr::name);
    if (!initializers_.insert(attr).second) return names_[v] = attr;  // read twice: one copy
    const torch::Tensor t = module_.attr(attr).toTensor().detach().to(torch::kFloat32).contiguous();
    onnx::TensorProto* init = graph_.add_initializer();
    init->set_name(attr);
    init->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : t.sizes()) init->add_dims(d);
    init->set_raw_data(t.data_ptr<float>(), t.numel() * sizeof(float));
    return names_[v] = attr;
  }

  // The length of a list argument: a list literal is a prim::ListConstruct, else a constant.
  size_t listSize(const Value* v) {
    if (v->node()->kind() == c10::prim::ListConstruct) return v->node()->inputs().size();
    return constant(v).toIntList().size();
  }

  c10::IValue constant(const Value* v) {
    const auto x = torch::jit::toIValue(v);
    if (!x) throw std::runtime_error("onnx export: value %" + v->debugName() + " is not constant");
    return *x;
  }

  onnx::NodeProto& add(const std::string& op, const std::vector<std::string>& in,
                       const std::string& out) {
    onnx::NodeProto* n = graph_.add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(graph_.node_size()));
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
    return *n;
  }

  static void floatAttr(onnx::NodeProto& n, const std::string& key, double x) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(x));
  }
  static void intAttr(onnx::NodeProto& n, const std::string& key, int64_t x) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(x);
  }

  void node(const Node& n) {
    const auto k = n.kind();
    // Attribute reads, constants and lists are read where they are used.
    if (k == c10::prim::GetAttr || k == c10::prim::Constant || k == c10::prim::ListConstruct)
      return;
    const auto in = n.inputs();
    const std::string out = "v" + std::to_string(names_.size());
    if (k == c10::aten::to) {  // obs.float(): computed in float32
      intAttr(add("Cast", {name(in[0])}, out), "to", onnx::TensorProto::FLOAT);
    } else if (k == c10::aten::sub) {
      if (in.size() > 2 && constant(in[2]).toScalar().toDouble() != 1.0) unsupported(n);
      add("Sub", {name(in[0]), name(in[1])}, out);
    } else if (k == c10::aten::mul) {
      add("Mul", {name(in[0]), name(in[1])}, out);
    } else if (k == c10::aten::linear) {  // x W^T + b
      intAttr(add("Gemm", {name(in[0]), name(in[1]), name(in[2])}, out), "transB", 1);
    } else if (k == c10::aten::elu) {
      if (constant(in[2]).toScalar().toDouble() != 1.0 ||
          constant(in[3]).toScalar().toDouble() != 1.0)
        unsupported(n);  // scale, input_scale: plain ELU only
      floatAttr(add("Elu", {name(in[0])}, out), "alpha", constant(in[1]).toScalar().toDouble());
    } else if (k == c10::aten::relu) {
      add("Relu", {name(in[0])}, out);
    } else if (k == c10::aten::tanh) {
      add("Tanh", {name(in[0])}, out);
    } else if (k == c10::aten::layer_norm) {  // over the last dimension
      if (listSize(in[1]) != 1) unsupported(n);
      onnx::NodeProto& ln = add("LayerNormalization", {name(in[0]), name(in[2]), name(in[3])}, out);
      intAttr(ln, "axis", -1);
      floatAttr(ln, "epsilon", constant(in[4]).toDouble());
    } else {
      unsupported(n);
    }
    names_[n.output()] = out;
  }

  const torch::jit::Module& module_;
  onnx::GraphProto& graph_;
  std::map<const Value*, std::string> names_;
  std::set<std::string> initializers_;
};

void tensorType(onnx::ValueInfoProto& v, const std::string& name, int64_t width) {
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("batch");
  t->mutable_shape()->add_dim()->set_dim_value(width);
}

}  // namespace

std::string onnxModelBytes(const torch::jit::Module& module, const PolicyMetadata& meta) {
  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.add_opset_import()->set_version(kOpset);
  model.set_producer_name("diffloco");
  model.set_producer_version(DIFFLOCO_VERSION);
  model.set_doc_string(
      "diffloco policy: actions = actor(normalise(obs)), before the action clip and scale; "
      "metadata_json holds the contract (docs/deploy.md)");
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("diffloco_policy");
  GraphTranslator(module, graph).translate(*module.get_method("forward").graph());
  tensorType(*graph.add_input(), "obs", meta.numObs);
  tensorType(*graph.add_output(), "actions", meta.numJoints());
  for (const auto& [key, value] : std::map<std::string, std::string>{
           {"metadata_json", toJson(meta)}, {"format", meta.format}}) {
    auto* p = model.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("onnx export: ONNX's checker rejects the model: ") +
                             e.what());
  }
  return model.SerializeAsString();
}

}  // namespace diffloco::deploy
