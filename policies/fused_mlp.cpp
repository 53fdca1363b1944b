#include "policies/fused_mlp.h"

#include <stdexcept>

namespace diffloco::policies {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

MlpKernel kernelOf(const AutogradContext& ctx) {
  const auto& d = ctx.saved_data;
  const auto hidden64 = d.at("hidden").toIntVector();
  return MlpKernel(static_cast<int>(d.at("in").toInt()),
                   std::vector<int>(hidden64.begin(), hidden64.end()),
                   static_cast<int>(d.at("out").toInt()), d.at("activation").toStringRef(),
                   d.at("layer_norm").toBool());
}

struct MlpFunction : torch::autograd::Function<MlpFunction> {
  // x [rows, in] and params contiguous float.
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& params,
                        const MlpKernel& kernel) {
    const int64_t rows = x.size(0);
    Tensor y = torch::empty({rows, kernel.out()}, x.options());
    Tensor cache = torch::empty({kernel.cacheSize(rows)}, x.options());
    kernel.forward(params.data_ptr<float>(), x.data_ptr<float>(), rows, y.data_ptr<float>(),
                   cache.data_ptr<float>());
    ctx->save_for_backward({x, params});
    ctx->saved_data["cache"] = cache;
    ctx->saved_data["in"] = static_cast<int64_t>(kernel.in());
    ctx->saved_data["out"] = static_cast<int64_t>(kernel.out());
    // The shape as values (a node keeps only tensors and values): kernelOf() rebuilds it.
    const std::vector<int> hidden = kernel.hidden();
    ctx->saved_data["hidden"] = std::vector<int64_t>(hidden.begin(), hidden.end());
    ctx->saved_data["activation"] = kernel.activation();
    ctx->saved_data["layer_norm"] = kernel.layerNorm();
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list gradOutputs) {
    const auto saved = ctx->get_saved_variables();
    const Tensor& x = saved[0];
    const Tensor& params = saved[1];
    const MlpKernel kernel = kernelOf(*ctx);
    const Tensor gy = gradOutputs[0].to(torch::kFloat).contiguous();
    const int64_t rows = x.size(0);
    Tensor gx, gp;
    if (ctx->needs_input_grad(0)) gx = torch::empty_like(x);
    if (ctx->needs_input_grad(1)) gp = torch::zeros_like(params);
    kernel.backward(params.data_ptr<float>(), x.data_ptr<float>(),
                    ctx->saved_data.at("cache").toTensor().data_ptr<float>(), rows,
                    gy.data_ptr<float>(), gp.defined() ? gp.data_ptr<float>() : nullptr,
                    gx.defined() ? gx.data_ptr<float>() : nullptr);
    return {gx, gp, Tensor()};
  }
};

}  // namespace

FusedMlp::FusedMlp(int in, const std::vector<int>& hidden, int out, const std::string& activation,
                   bool layerNorm)
    : kernel_(in, hidden, out, activation, layerNorm) {}

Tensor FusedMlp::forward(const Tensor& x, const Tensor& params) const {
  if (x.scalar_type() != torch::kFloat || params.scalar_type() != torch::kFloat)
    throw std::invalid_argument("FusedMlp: float inputs and parameters expected");
  if (x.dim() < 1 || x.size(-1) != kernel_.in())
    throw std::invalid_argument("FusedMlp: input of " + std::to_string(kernel_.in()) +
                                " features expected, got " + std::to_string(x.size(-1)));
  if (params.dim() != 1 || params.numel() != kernel_.numParameters())
    throw std::invalid_argument("FusedMlp: a flat parameter vector of " +
                                std::to_string(kernel_.numParameters()) + " values expected");
  const Tensor rows = x.reshape({-1, kernel_.in()}).contiguous();
  const Tensor y =
      MlpFunction::apply(rows, params.contiguous(), kernel_);
  if (x.dim() == 2) return y;
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = kernel_.out();
  return y.reshape(shape);
}

}  // namespace diffloco::policies
