"""Every correct consumer the hostile rounds hold ok, ``safe`` first: the gallery's (``correct``), and those
rounds 24, 29, 31, 46, 48, 56, 65 and 68 and the unseen set wrote, each taking a liberty the rules allow. One
list, so that a new case is run with all of them."""
from __future__ import annotations

from simkit import Consumer

from . import correct, round24, round29, round31, round46, round48, round56, round65, round68_correct, unseen

__all__ = ["CORRECT"]

CORRECT = (Consumer, correct.ReadAhead, correct.RememberedIdentity, correct.FreshReceiptsPatientBackoff,
           correct.ReceiptsOnly, correct.RereadsBeforeHalting, correct.ExtraPolls, unseen.PipelinedReadAhead,
           round24.PrefetchBeforeValidating, round24.BackOffAsBlocked, round29.RetryCallInAttempt,
           round29.NoProvisionalWrite, round29.YieldsToTheOther, round31.ClaimsThePage,
           round31.PrefixThenCursor, round31.HandleThenCommit, round31.RecordsWhatBlocks,
           round31.ChecksLostCommits, round48.ReadAheadBacksOffOneWay, round48.PatientBackoff,
           round48.ReserveAhead, round48.TwoPagesThenPublish, round48.HaltOnTheNextPageFirst,
           round46.RemembersServedIds, round56.ReceiptsAfterThePage, round56.ReconcileEachLife,
           round56.HeartbeatWhileBlocked, round65.ClaimsAheadThroughReceipts,
           round65.RemembersCommittedInLife, round65.SettlesTwiceBeforeBlocking,
           round65.BacksOffLongerEachTime, round68_correct.StrictMemory, round68_correct.HoldPrefix,
           round68_correct.TwoStepBarrier, round68_correct.RecordHold, round68_correct.DecideThenCommit,
           round68_correct.CachedDecision, round68_correct.YieldOnOthersReceipt)
