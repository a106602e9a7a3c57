//! Pinned files' IO: each pin resolved beneath the workspace root and read through the
//! workspace handle; whether it may be pinned and how the model sees it is decided by
//! `talos_core::turn::pins` (in the turn machine).

use talos_core::turn::pins;

use super::context::TurnCtx;

/// Each pin's shown path and bytes, or why it could not be read.
pub fn read_all(ctx: &TurnCtx, pins: &[String]) -> Vec<Result<(String, Vec<u8>), String>> {
    crate::offload::blocking(|| pins.iter().map(|pin| read(ctx, pin)).collect())
}

fn read(ctx: &TurnCtx, pin: &str) -> Result<(String, Vec<u8>), String> {
    let resolved = ctx.files.resolve(pin);
    let shown = pins::admit(pin, &resolved.facts)?;
    let location = resolved
        .location
        .as_deref()
        .ok_or_else(|| format!("pin {pin} refused: outside the workspace"))?;
    let bytes = ctx
        .files
        .read_unshared(location, &shown)
        .map_err(|e| format!("pin {shown}: {e}"))?
        .ok_or_else(|| format!("pin {shown}: file not found"))?;
    Ok((shown, bytes))
}
