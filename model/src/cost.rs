//! Typing a graph with the adapters' shapes, and its cost at the
//! reference size as tract counts it.

use tract_onnx::prelude::*;

use crate::check::Refusal;

/// The graph typed and decluttered with `shapes` as its inputs.
pub(crate) fn typed_with<D: Into<TDim> + Clone>(
    mut model: InferenceModel,
    shapes: &[Vec<D>],
) -> Result<TypedModel, Refusal> {
    let typing = |e: TractError| Refusal::Typing(format!("{e:#}"));
    for (ix, shape) in shapes.iter().enumerate() {
        let dims: Vec<TDim> = shape.iter().cloned().map(Into::into).collect();
        model = model
            .with_input_fact(ix, f32::fact(dims).into())
            .map_err(typing)?;
    }
    model
        .into_typed()
        .and_then(|m| m.into_decluttered())
        .map_err(typing)
}

/// Multiply-accumulates of one evaluation at the reference shapes, as
/// tract's operators count them.
pub(crate) fn estimate(model: InferenceModel, reference: &[Vec<usize>]) -> Result<u64, Refusal> {
    let typed = typed_with(model, reference)?;
    let cost = |e: TractError| Refusal::Cost(format!("{e:#}"));
    let mut macs: u64 = 0;
    for node in typed.nodes() {
        let inputs = typed.node_input_facts(node.id).map_err(cost)?;
        for (kind, count) in node.op.cost(&inputs).map_err(cost)? {
            if matches!(kind, tract_onnx::tract_core::ops::Cost::FMA(_)) {
                let count = count
                    .to_i64()
                    .ok()
                    .and_then(|c| u64::try_from(c).ok())
                    .ok_or_else(|| Refusal::Cost(format!("node {:?} costs {count}", node.name)))?;
                macs = macs.saturating_add(count);
            }
        }
    }
    Ok(macs)
}
