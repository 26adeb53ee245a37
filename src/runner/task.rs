//! `kind: task`: one round. The agent is started on the task's prompt and acts until it
//! reports, breaks or is stopped; its report is a claim, judged against the validations.

use crate::error::RunError;

use super::episode::{Episode, RoundEnd};
use super::judge::{Ending, KindCheck};
use super::record::AttemptRecord;
use super::{Attempt, KindRun};

/// The one round of a plain task.
pub(super) struct OneRound;

impl KindRun for OneRound {
    fn play(&mut self, att: &mut Attempt<'_>, record: &mut AttemptRecord) -> Result<Ending, RunError> {
        let mut episode = Episode::start(att, att.task.prompt.clone())?;
        let end = episode.round(att)?;
        episode.finish();
        Ok(match end {
            RoundEnd::Reported(report) => {
                let claim = Some(report.result);
                record.final_report = Some(report);
                Ending::Finished {
                    claim,
                    check: KindCheck::NoneRan,
                }
            }
            RoundEnd::AgentFailed(failure) => Ending::AgentBroke(failure.to_string()),
            RoundEnd::Stopped(outcome, reason) => Ending::Stopped(outcome, reason),
        })
    }
}
