//! The deterministic viewer `auto` mode uses for structural commands (`ls`, `show FILE`): the
//! core's viewer (`talos_core::turn::view`) decides; its effects are performed like a call's.

use talos_core::modes::Structural;
use talos_core::turn::call::{Effect, Input};
use talos_core::turn::view::View;

use super::calls;
use super::context::TurnCtx;

pub async fn answer(ctx: &mut TurnCtx, command: Structural) -> String {
    let mut view = View::new(&mut ctx.core, &command);
    let mut input = Input::Start;
    loop {
        let effect = view.step(&mut ctx.core, input);
        ctx.emit_notices().await;
        input = match effect {
            Effect::Finish(report) => return report.text,
            effect => {
                let id = view.id().to_string();
                calls::perform(ctx, &id, effect).await
            }
        };
    }
}
