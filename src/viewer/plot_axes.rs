//! Plot axes that label what a reader needs: grid lines on the 1-2-5 ladder (…, 0.1, 0.2,
//! 0.5, 1, 2, 5, …) with labels as close as egui_plot prints them in full, and labels with the
//! decimals their step needs. Used by the curves panel and the stage-times plot.

use egui_plot::{GridInput, GridMark};

/// Points between two labelled grid lines at least, per axis: where egui_plot prints a tick
/// label in full (it fades them in from 60 to 80 points apart on X, 20 to 30 on Y).
pub const LABEL_PX: [f64; 2] = [80.0, 30.0];

/// egui_plot's default `grid_spacing` minimum (points): a spacer's `base_step_size` is the
/// value that many points span.
const GRID_MIN_PX: f64 = 8.0;

/// The smallest step of the 1-2-5 ladder (…, 0.1, 0.2, 0.5, 1, 2, 5, …) at least `v` (> 0).
pub fn ladder_step_at_least(v: f64) -> f64 {
    let decade = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&step| step >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * decade)
}

/// Grid lines on the 1-2-5 ladder for an axis whose labels need `label_px` points: the
/// labelled step is the smallest at least that far apart, with a finer unlabelled step below
/// it and ten times it above. egui_plot's default powers of ten jump tenfold, so a 3 s clip
/// 800 points wide labelled whole seconds only, and a 120° range 110 points tall only its 0.
pub fn ladder_grid(label_px: f64) -> impl Fn(GridInput) -> Vec<GridMark> {
    move |input| {
        let per_px = input.base_step_size / GRID_MIN_PX;
        if !(per_px.is_finite() && per_px > 0.0) {
            return Vec::new();
        }
        let label = ladder_step_at_least(per_px * label_px);
        // One rung down for 2 (its fifths would not be on the ladder), two for 1 and 5.
        let fine = ladder_step_at_least(label / 5.0);
        egui_plot::uniform_grid_spacer(move |_| [fine, label, 10.0 * label])(input)
    }
}

/// A grid mark's label with the decimals its step needs (0.5 as `0.5`, where egui_plot's
/// default rounds the decimals of a half-decade step down to none).
pub fn ladder_label(mark: GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    let decimals = (-mark.step_size.log10().floor()).clamp(0.0, 12.0) as usize;
    egui::emath::format_with_decimals_in_range(mark.value, decimals..=decimals)
}
