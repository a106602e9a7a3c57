//! Pinned files' IO: each pin resolved beneath the workspace root and read through the
//! workspace handle; whether it may be pinned and how the model sees it is decided by
//! `talos_core::turn::pins`.

use serde_json::{Value, json};
use talos_core::turn::pins;
use talos_protocol::event::TurnEvent;

use super::context::TurnCtx;

/// The user message that carries the pinned files, or `None` when nothing could be pinned.
pub async fn message(ctx: &mut TurnCtx, pins: &[String]) -> Option<Value> {
    let mut blocks = Vec::new();
    for pin in pins {
        let block = crate::offload::blocking(|| read(ctx, pin))
            .and_then(|(shown, bytes)| ctx.core.pin(&shown, bytes));
        match block {
            Ok(block) => blocks.push(block),
            Err(message) => ctx.emit(TurnEvent::Error { message }).await,
        }
    }
    (!blocks.is_empty()).then(|| json!({"role": "user", "content": blocks.join("\n\n")}))
}

fn read(ctx: &TurnCtx, pin: &str) -> Result<(String, Vec<u8>), String> {
    let resolved = ctx.session.files.resolve(pin);
    let shown = pins::admit(pin, &resolved.facts)?;
    let location = resolved
        .location
        .as_deref()
        .ok_or_else(|| format!("pin {pin} refused: outside the workspace"))?;
    let bytes = ctx
        .session
        .files
        .read_unshared(location, &shown)
        .map_err(|e| format!("pin {shown}: {e}"))?
        .ok_or_else(|| format!("pin {shown}: file not found"))?;
    Ok((shown, bytes))
}
