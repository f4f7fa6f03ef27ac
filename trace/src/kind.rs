//! The kind of a sync operation, without its operands: how every stage after the trace names
//! an operation (schedule files, candidates, replay outcomes, reports).
//!
//! Takes a [`SyncOp`] ([`SyncOp::kind`]); gives an [`OpKind`], written in JSON as its
//! [`OpKind::name`] (the short lowercase name `ilgen dump` prints), so the files read as before
//! while every reader gets an enum, not a string to compare.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::event::SyncOp;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    Start,
    End,
    Fork,
    Join,
    Detach,
    Lock,
    TryLock,
    TimedLock,
    Unlock,
    RdLock,
    WrLock,
    TryRdLock,
    TryWrLock,
    RwUnlock,
    Wait,
    Wake,
    Signal,
    Broadcast,
    BarrierEnter,
    BarrierExit,
    SpinLock,
    SpinTryLock,
    SpinUnlock,
    SemWait,
    SemTryWait,
    SemPost,
    WaitLoopEnter,
    WaitLoopExit,
    Exit,
    SemInit,
    SemTimedWait,
    SemDestroy,
    MutexDestroy,
    CondDestroy,
    RwDestroy,
    BarrierDestroy,
    TxBegin,
    TxEnd,
    ChannelWrite,
    ChannelRead,
}

impl OpKind {
    /// Every kind, in declaration order.
    pub const ALL: [OpKind; 40] = [
        OpKind::Start,
        OpKind::End,
        OpKind::Fork,
        OpKind::Join,
        OpKind::Detach,
        OpKind::Lock,
        OpKind::TryLock,
        OpKind::TimedLock,
        OpKind::Unlock,
        OpKind::RdLock,
        OpKind::WrLock,
        OpKind::TryRdLock,
        OpKind::TryWrLock,
        OpKind::RwUnlock,
        OpKind::Wait,
        OpKind::Wake,
        OpKind::Signal,
        OpKind::Broadcast,
        OpKind::BarrierEnter,
        OpKind::BarrierExit,
        OpKind::SpinLock,
        OpKind::SpinTryLock,
        OpKind::SpinUnlock,
        OpKind::SemWait,
        OpKind::SemTryWait,
        OpKind::SemPost,
        OpKind::WaitLoopEnter,
        OpKind::WaitLoopExit,
        OpKind::Exit,
        OpKind::SemInit,
        OpKind::SemTimedWait,
        OpKind::SemDestroy,
        OpKind::MutexDestroy,
        OpKind::CondDestroy,
        OpKind::RwDestroy,
        OpKind::BarrierDestroy,
        OpKind::TxBegin,
        OpKind::TxEnd,
        OpKind::ChannelWrite,
        OpKind::ChannelRead,
    ];

    /// Short lowercase name, as `ilgen dump` prints it and JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Start => "start",
            OpKind::End => "end",
            OpKind::Fork => "fork",
            OpKind::Join => "join",
            OpKind::Detach => "detach",
            OpKind::Lock => "lock",
            OpKind::TryLock => "trylock",
            OpKind::TimedLock => "timedlock",
            OpKind::Unlock => "unlock",
            OpKind::RdLock => "rdlock",
            OpKind::WrLock => "wrlock",
            OpKind::TryRdLock => "tryrdlock",
            OpKind::TryWrLock => "trywrlock",
            OpKind::RwUnlock => "rwunlock",
            OpKind::Wait => "wait",
            OpKind::Wake => "wake",
            OpKind::Signal => "signal",
            OpKind::Broadcast => "broadcast",
            OpKind::BarrierEnter => "barrier_enter",
            OpKind::BarrierExit => "barrier_exit",
            OpKind::SpinLock => "spin_lock",
            OpKind::SpinTryLock => "spin_trylock",
            OpKind::SpinUnlock => "spin_unlock",
            OpKind::SemWait => "sem_wait",
            OpKind::SemTryWait => "sem_trywait",
            OpKind::SemPost => "sem_post",
            OpKind::WaitLoopEnter => "waitloop_enter",
            OpKind::WaitLoopExit => "waitloop_exit",
            OpKind::Exit => "exit",
            OpKind::SemInit => "sem_init",
            OpKind::SemTimedWait => "sem_timedwait",
            OpKind::SemDestroy => "sem_destroy",
            OpKind::MutexDestroy => "mutex_destroy",
            OpKind::CondDestroy => "cond_destroy",
            OpKind::RwDestroy => "rwlock_destroy",
            OpKind::BarrierDestroy => "barrier_destroy",
            OpKind::TxBegin => "tx_begin",
            OpKind::TxEnd => "tx_end",
            OpKind::ChannelWrite => "channel_write",
            OpKind::ChannelRead => "channel_read",
        }
    }

    /// The kind named `name`, if any.
    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for OpKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for OpKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for OpKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OpKind, D::Error> {
        let name = String::deserialize(d)?;
        OpKind::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown sync operation `{name}`")))
    }
}

impl SyncOp {
    pub fn kind(&self) -> OpKind {
        match self {
            SyncOp::Start => OpKind::Start,
            SyncOp::End => OpKind::End,
            SyncOp::Fork { .. } => OpKind::Fork,
            SyncOp::Join { .. } => OpKind::Join,
            SyncOp::Detach { .. } => OpKind::Detach,
            SyncOp::MutexLock { .. } => OpKind::Lock,
            SyncOp::MutexTryLock { .. } => OpKind::TryLock,
            SyncOp::MutexTimedLock { .. } => OpKind::TimedLock,
            SyncOp::MutexUnlock { .. } => OpKind::Unlock,
            SyncOp::RwRdLock { .. } => OpKind::RdLock,
            SyncOp::RwWrLock { .. } => OpKind::WrLock,
            SyncOp::RwTryRdLock { .. } => OpKind::TryRdLock,
            SyncOp::RwTryWrLock { .. } => OpKind::TryWrLock,
            SyncOp::RwUnlock { .. } => OpKind::RwUnlock,
            SyncOp::CondWait { .. } => OpKind::Wait,
            SyncOp::CondWake { .. } => OpKind::Wake,
            SyncOp::CondSignal { .. } => OpKind::Signal,
            SyncOp::CondBroadcast { .. } => OpKind::Broadcast,
            SyncOp::BarrierEnter { .. } => OpKind::BarrierEnter,
            SyncOp::BarrierExit { .. } => OpKind::BarrierExit,
            SyncOp::SpinLock { .. } => OpKind::SpinLock,
            SyncOp::SpinTryLock { .. } => OpKind::SpinTryLock,
            SyncOp::SpinUnlock { .. } => OpKind::SpinUnlock,
            SyncOp::SemWait { .. } => OpKind::SemWait,
            SyncOp::SemTryWait { .. } => OpKind::SemTryWait,
            SyncOp::SemPost { .. } => OpKind::SemPost,
            SyncOp::WaitLoopEnter { .. } => OpKind::WaitLoopEnter,
            SyncOp::WaitLoopExit { .. } => OpKind::WaitLoopExit,
            SyncOp::Exit => OpKind::Exit,
            SyncOp::SemInit { .. } => OpKind::SemInit,
            SyncOp::SemTimedWait { .. } => OpKind::SemTimedWait,
            SyncOp::SemDestroy { .. } => OpKind::SemDestroy,
            SyncOp::MutexDestroy { .. } => OpKind::MutexDestroy,
            SyncOp::CondDestroy { .. } => OpKind::CondDestroy,
            SyncOp::RwDestroy { .. } => OpKind::RwDestroy,
            SyncOp::BarrierDestroy { .. } => OpKind::BarrierDestroy,
            SyncOp::TxBegin => OpKind::TxBegin,
            SyncOp::TxEnd => OpKind::TxEnd,
            SyncOp::ChannelWrite { .. } => OpKind::ChannelWrite,
            SyncOp::ChannelRead { .. } => OpKind::ChannelRead,
        }
    }
}
