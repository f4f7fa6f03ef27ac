//! Which loads decide an address or a waiting loop's branch: the reads whose writer a predicted
//! schedule must keep (issue "reads keep their writers").
//!
//! Takes a load; gives whether it loads a pointer, or its value reaches, through a bounded walk
//! over its SSA uses, an address (the pointer operand of a load, store, GEP or atomic, or a
//! called function pointer). Such a read decides which object the thread goes on to touch (the
//! job a worker dequeues): a schedule that changes what it sees sends the thread to other memory.
//! Reads that decide only a branch are not flagged: many of them (a counter compared after the
//! racy read was made, a status flag) do not keep the race from happening, and keeping their
//! writers would hide real races; replay refutes the predictions they make infeasible. The
//! exceptions are a loop that waits for another thread and a branch that guards a sync operation
//! (`predicates.rs`): a schedule that changes what their condition saw does not refute itself, it
//! hangs, leaves the loop early or skips a sync operation, and the replay follows nothing after.
//! So are the reads that decide what a function returns, when its caller cannot be seen from
//! here (`predicates.rs`: a query's value, a branch choosing the returned value): the waiting
//! loop may be in another translation unit, branching on the call.
//! A value that goes through a function-local stack slot (`-O0` keeps every variable in one) is
//! followed through that slot's loads. A value passed to a call or stored to memory is not
//! followed: the analysis then treats the read as data only, as it treated every read before.
//!
//! The analysis (`ilgen-analysis`, model) keeps, for a deciding read of another thread's write,
//! the observed order of the writer's segment before the reader's; a plain data read (`x++` of
//! the paper's Listing 1) keeps no such order, so its race stays predictable.

use std::collections::HashSet;

use inkwell::types::AnyTypeEnum;
use inkwell::values::{InstructionOpcode, InstructionValue};

use crate::ir;

/// How many uses deep the walk goes before it gives up (saying "does not decide").
const MAX_STEPS: usize = 64;

/// Whether load `load` decides an address.
pub fn decides(load: InstructionValue<'_>) -> bool {
    if load.get_opcode() != InstructionOpcode::Load {
        return false;
    }
    if matches!(load.get_type(), AnyTypeEnum::PointerType(_)) {
        return true;
    }
    reaches(load, |user, idx| match user.get_opcode() {
        InstructionOpcode::Load
        | InstructionOpcode::GetElementPtr
        | InstructionOpcode::AtomicRMW
        | InstructionOpcode::AtomicCmpXchg => true,
        // Operand 1 of a store is the address.
        InstructionOpcode::Store => idx == 1,
        // The callee is a call's last operand.
        InstructionOpcode::Call | InstructionOpcode::Invoke => idx + 1 == user.get_num_operands(),
        _ => false,
    })
}

/// Whether `load`'s value reaches a use that `hit(user, operand index)` accepts, through a bounded
/// walk over its SSA uses: value-preserving or arithmetic instructions are followed, and a value
/// stored into a local stack slot is followed through that slot's loads.
pub(crate) fn reaches<'ctx>(
    load: InstructionValue<'ctx>,
    hit: impl Fn(InstructionValue<'ctx>, u32) -> bool,
) -> bool {
    let mut seen = HashSet::new();
    let mut work = vec![load];
    let mut steps = 0;
    while let Some(v) = work.pop() {
        if !seen.insert(v) {
            continue;
        }
        steps += 1;
        if steps > MAX_STEPS {
            return false;
        }
        let Some(uses) = ir::uses(v) else {
            continue;
        };
        for (user, idx) in uses {
            if hit(user, idx) {
                return true;
            }
            match user.get_opcode() {
                // Operand 0 of a store is the stored value.
                InstructionOpcode::Store if idx == 0 => work.extend(slot_loads(user)),
                InstructionOpcode::ICmp
                | InstructionOpcode::FCmp
                | InstructionOpcode::Select
                | InstructionOpcode::Phi
                | InstructionOpcode::Trunc
                | InstructionOpcode::ZExt
                | InstructionOpcode::SExt
                | InstructionOpcode::BitCast
                | InstructionOpcode::IntToPtr
                | InstructionOpcode::PtrToInt
                | InstructionOpcode::FPToSI
                | InstructionOpcode::FPToUI
                | InstructionOpcode::SIToFP
                | InstructionOpcode::UIToFP
                | InstructionOpcode::Add
                | InstructionOpcode::Sub
                | InstructionOpcode::Mul
                | InstructionOpcode::UDiv
                | InstructionOpcode::SDiv
                | InstructionOpcode::URem
                | InstructionOpcode::SRem
                | InstructionOpcode::And
                | InstructionOpcode::Or
                | InstructionOpcode::Xor
                | InstructionOpcode::Shl
                | InstructionOpcode::LShr
                | InstructionOpcode::AShr
                | InstructionOpcode::Freeze => work.push(user),
                _ => {}
            }
        }
    }
    false
}

/// The loads of the stack slot `store` writes, if it writes one (an `alloca` of this function).
fn slot_loads(store: InstructionValue<'_>) -> Vec<InstructionValue<'_>> {
    let slot = ir::operand(store, 1).and_then(|p| {
        use inkwell::values::BasicValue;
        p.as_instruction_value()
    });
    let Some(slot) = slot.filter(|s| s.get_opcode() == InstructionOpcode::Alloca) else {
        return Vec::new();
    };
    ir::uses(slot)
        .unwrap_or_default()
        .into_iter()
        .filter(|&(u, idx)| u.get_opcode() == InstructionOpcode::Load && idx == 0)
        .map(|(u, _)| u)
        .collect()
}
