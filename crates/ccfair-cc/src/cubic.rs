//! CUBIC (placeholder: parameters only; the algorithm is being ported from Linux tcp_cubic.c).

use serde::{Deserialize, Serialize};

use ccfair_core::ParamDoc;

use crate::config::ConfigError;
use crate::{CongestionControl, TcpSock};

/// Module parameters of `tcp_cubic.c`, with the kernel defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CubicParams {
    /// Multiplicative decrease factor (kernel: `beta` = 717/1024).
    pub beta: f64,
    /// Cubic scaling constant C in packets/s^3 (kernel: `bic_scale` = 41, C = 41*10/1024 = 0.4004).
    pub c: f64,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    /// 1 = ACK train, 2 = delay increase, 3 = both.
    pub hystart_detect: u8,
    pub hystart_low_window: u32,
    pub hystart_ack_delta_us: u32,
    /// Initial ssthresh in packets, used only with HyStart off (0 = infinite).
    pub initial_ssthresh: u32,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            beta: 717.0 / 1024.0,
            c: 0.4,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_detect: 3,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            initial_ssthresh: 0,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "beta",
        allowed: "0 < beta < 1",
        doc: "multiplicative decrease factor (kernel 717/1024)",
    },
    ParamDoc {
        name: "c",
        allowed: "0 < c <= 100",
        doc: "cubic scaling constant C, packets/s^3 (kernel 0.4)",
    },
    ParamDoc {
        name: "fast_convergence",
        allowed: "true | false",
        doc: "release bandwidth faster (W_max reduced further)",
    },
    ParamDoc {
        name: "tcp_friendliness",
        allowed: "true | false",
        doc: "Reno-friendly region",
    },
    ParamDoc {
        name: "hystart",
        allowed: "true | false",
        doc: "HyStart slow-start exit",
    },
    ParamDoc {
        name: "hystart_detect",
        allowed: "1 | 2 | 3",
        doc: "1 ACK train, 2 delay, 3 both",
    },
    ParamDoc {
        name: "hystart_low_window",
        allowed: ">= 2",
        doc: "HyStart active from this cwnd",
    },
    ParamDoc {
        name: "hystart_ack_delta_us",
        allowed: ">= 1",
        doc: "max ACK spacing within a train, us",
    },
    ParamDoc {
        name: "initial_ssthresh",
        allowed: ">= 0",
        doc: "initial ssthresh, packets (0 = infinite; only without HyStart)",
    },
];

impl CubicParams {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |field: &str, message: &str| {
            Err(ConfigError {
                field: field.into(),
                message: message.into(),
            })
        };
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return err("beta", "must be between 0 and 1 (exclusive)");
        }
        if !(self.c > 0.0 && self.c <= 100.0) {
            return err("c", "must be in (0, 100]");
        }
        if !(1..=3).contains(&self.hystart_detect) {
            return err("hystart_detect", "must be 1, 2 or 3");
        }
        if self.hystart_low_window < 2 {
            return err("hystart_low_window", "must be at least 2");
        }
        if self.hystart_ack_delta_us == 0 {
            return err("hystart_ack_delta_us", "must be at least 1");
        }
        Ok(())
    }
}

pub struct Cubic {
    _params: CubicParams,
}

impl Cubic {
    pub fn new(params: CubicParams) -> Cubic {
        Cubic { _params: params }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn ssthresh(&mut self, tp: &mut TcpSock) -> u32 {
        ((tp.snd_cwnd as u64 * 717 / 1024) as u32).max(2)
    }
    fn cong_avoid(&mut self, tp: &mut TcpSock, acked: u32) {
        crate::reno::cong_avoid(tp, acked)
    }
}
