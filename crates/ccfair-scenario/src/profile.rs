//! Flow profiles: named presets of a flow group's stack keys (`cc`, `initial_window`, `pacing`), the
//! congestion-control stack of a kind of server, laid under the group's own keys as a `[host]` preset is laid
//! under the host keys: a key the group writes wins, a key it leaves out comes from the profile, and a key
//! neither writes has the document's default.
//!
//! In a nutshell: `profile = "google-2019"` in a `[[flows]]` table makes the group's flows send as the
//! named stack did (BBR v1, an initial window of 10, paced), so an experiment against "a content provider" says
//! which stack it means and where each value comes from. The profiles of the providers Rüth, Kunze and
//! Hohlfeld measured ("An Empirical View on Content Provider Fairness", TMA 2019) are **2019
//! reconstructions**: public statements and third-party measurements of each provider's stack around the
//! paper's measurements (before its upload on 17 May 2019), not the providers' configurations. Every value
//! names its source; a value no source establishes is marked assumed, with the reason. The generic profiles
//! are Linux's own defaults and two common server tunings.
//!
//! What a profile sets and why only these keys: the sender's congestion control module, its initial window
//! (a route's `initcwnd`, `tcp_init_cwnd` in `include/net/tcp.h`) and whether it paces (sch_fq, or TCP's
//! internal pacing: both release segments at the departure times TCP stamps from `sk_pacing_rate` since
//! Linux 4.20, and neither paces the first 10 data segments, `tcp_update_skb_after_send`). Every profile
//! leaves the algorithm's parameters at the module's defaults (no source gives a provider's module
//! parameters) and ECN off (Linux's server default answers ECN only when a client asks).
//!
//! Deviations, named: Akamai's 2019 stack was not a Linux congestion control (a delay-based, FAST TCP
//! derived "loss-agnostic rate-based" variant, Mishra et al., "The Great Internet TCP Congestion Control
//! Census", POMACS 2019); ccfair models no delay-based algorithm, so the Akamai profiles stand in paced
//! Cubic with Akamai's measured initial windows. Stack details beyond these keys (Cloudflare's
//! `tcp_notsent_lowat` of 16 KB, MSS clamping, HTTP/2 and TLS record sizing) are not modelled; a bulk
//! download keeps its socket's send buffer full, where `tcp_notsent_lowat` changes when the application
//! writes, not what TCP sends. The servers' kernels are assumed Linux for Amazon and Edgecast (their statements
//! read do not say). Sources, in short (the docs' profile page gives them in full):
//!
//! - [CDNPlanet] "Initcwnd settings of major CDN providers", cdnplanet.com, Feb 2017 update: Akamai 32,
//!   EdgeCast/Verizon 30, CloudFront 25, Fastly 10, Cloudflare 10 (Aug 2014: Akamai 16). A third-party
//!   measurement, two years before the paper's.
//! - [Google] Google Cloud blog, 2017-07-20 (Cardwell, Cheng): BBR "powers TCP traffic from google.com" and
//!   YouTube. BBRv2 was presented in March 2019 and public as alpha code by August 2019 (google/bbr README):
//!   in the paper's time Google served BBR v1.
//! - [Cloudflare] Cloudflare blog, 2018-10-12, "Optimizing HTTP/2 prioritization with BBR and
//!   tcp_notsent_lowat": `net.core.default_qdisc = fq`, `net.ipv4.tcp_congestion_control = bbr`,
//!   `tcp_notsent_lowat = 16384`. Cloudflare's recommendation; its fleet's 2019 setting is inferred from it.
//! - [CloudFront] AWS blog, "TCP BBR Congestion Control with Amazon CloudFront": BBR deployed "during March and
//!   April 2019"; before that the Linux default is assumed (`amazon-2019`; `amazon-bbr-2019` after it).
//! - [Edgecast] Verizon Media, "BBR Evaluation at a Large CDN", 2019-09-27: BBR v1 under evaluation at a few
//!   PoPs, so not the 2019 default.
//! - [Fastly] Fastly VCL reference, `client.socket.congestion_algorithm`: cubic, reno or bbr, "cubic being the
//!   default" (a current page, assumed unchanged since 2019).
//! - [Akamai] Akamai blog, December 2019: BBR deployed worldwide "last month" (November 2019), so not at the
//!   paper's measurements; FastSoft (FAST TCP) was acquired by Akamai in 2012.
//! - [Linux] `net/ipv4/Kconfig` (`DEFAULT_TCP_CONG` cubic), `include/net/tcp.h` (`TCP_INIT_CWND` 10, RFC
//!   6928), `net/ipv4/tcp_bbr.c` (BBR paces with fq or TCP's internal pacing).

use ccfair_core::FieldError;
use serde::Serialize;

/// A value of a profile with where it comes from.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Sourced<T> {
    pub value: T,
    /// The source that establishes it, or the reason it is assumed.
    pub source: &'static str,
    /// True if no source establishes the value (it is the assumption `source` explains).
    pub assumed: bool,
}

const fn from<T>(value: T, source: &'static str) -> Sourced<T> {
    Sourced {
        value,
        source,
        assumed: false,
    }
}

const fn assumed<T>(value: T, reason: &'static str) -> Sourced<T> {
    Sourced {
        value,
        source: reason,
        assumed: true,
    }
}

/// What a profile stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileKind {
    /// A provider's stack as public sources of 2019 establish it: a reconstruction, not the provider's
    /// configuration.
    Reconstruction2019,
    /// A generic stack (Linux's defaults, a common tuning).
    Generic,
}

/// A named preset of a flow group's stack keys.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FlowProfile {
    pub name: &'static str,
    pub kind: ProfileKind,
    pub summary: &'static str,
    /// `flows[].cc`.
    pub cc: Sourced<&'static str>,
    /// `flows[].initial_window`, segments.
    pub initial_window: Sourced<u32>,
    /// `flows[].pacing`.
    pub pacing: Sourced<bool>,
    /// What of the stack the profile does not model.
    pub not_modelled: &'static str,
}

// The sources, once (see the module docs).
const CDNPLANET_2017: &str =
    "CDNPlanet, Initcwnd settings of major CDN providers, Feb 2017 update (measured)";
const LINUX_CUBIC: &str = "Linux net/ipv4/Kconfig: DEFAULT_TCP_CONG is cubic";
const LINUX_IW: &str = "Linux include/net/tcp.h: TCP_INIT_CWND = 10 (RFC 6928)";
const UNPACED_DEFAULT: &str = "Linux paces only under sch_fq or when asked (SO_MAX_PACING_RATE, BBR); \
                               no source says this provider did";
const BBR_PACES: &str = "BBR always paces (net/ipv4/tcp_bbr.c: with fq or TCP's internal pacing)";
const AKAMAI_CC: &str = "stand-in: Akamai's 2019 stack was a delay-based FAST TCP derivative (Mishra et al. \
                         2019 census; Akamai's BBR only from Nov 2019), which ccfair does not model; Cubic \
                         is the loss-based stand-in";
const AKAMAI_PACING: &str = "the census calls Akamai's variant rate-based, so paced";
const AKAMAI_NOT_MODELLED: &str = "Akamai's delay-based congestion control (a Cubic stand-in here) and its \
                                   rwnd- and RTT-dependent FastStart initial window";
const LINUX_DEFAULTS_ELSEWHERE: &str = "the algorithm's module parameters, MSS clamping, \
                                        tcp_notsent_lowat (assumed Linux defaults)";

/// Every profile, in the order listings and error messages give them.
pub const PROFILES: [FlowProfile; 11] = [
    FlowProfile {
        name: "akamai-a-2019",
        kind: ProfileKind::Reconstruction2019,
        summary: "Akamai, the configuration with an initial window of 32 (Rüth et al.'s AkamaiA)",
        cc: assumed("cubic", AKAMAI_CC),
        initial_window: from(32, CDNPLANET_2017),
        pacing: assumed(true, AKAMAI_PACING),
        not_modelled: AKAMAI_NOT_MODELLED,
    },
    FlowProfile {
        name: "akamai-e-2019",
        kind: ProfileKind::Reconstruction2019,
        summary: "Akamai, the configuration with an initial window of 16 (Rüth et al.'s AkamaiE)",
        cc: assumed("cubic", AKAMAI_CC),
        initial_window: from(
            16,
            "CDNPlanet, Initcwnd settings of major CDN providers, Aug 2014 update (measured); Rüth and \
             Hohlfeld, TMA 2018: CDNs use different initial windows for different customers",
        ),
        pacing: assumed(true, AKAMAI_PACING),
        not_modelled: AKAMAI_NOT_MODELLED,
    },
    FlowProfile {
        name: "amazon-2019",
        kind: ProfileKind::Reconstruction2019,
        summary: "Amazon CloudFront before its BBR deployment (March-April 2019)",
        cc: assumed(
            "cubic",
            "the Linux default; CloudFront deployed BBR during March and April 2019 (AWS blog), after the \
             paper's measurements as far as known",
        ),
        initial_window: from(25, CDNPLANET_2017),
        pacing: assumed(false, UNPACED_DEFAULT),
        not_modelled: LINUX_DEFAULTS_ELSEWHERE,
    },
    FlowProfile {
        name: "amazon-bbr-2019",
        kind: ProfileKind::Reconstruction2019,
        summary: "Amazon CloudFront after its BBR deployment (March-April 2019)",
        cc: from(
            "bbr",
            "AWS blog, TCP BBR Congestion Control with Amazon CloudFront: deployed during March and April 2019",
        ),
        initial_window: from(25, CDNPLANET_2017),
        pacing: from(true, BBR_PACES),
        not_modelled: LINUX_DEFAULTS_ELSEWHERE,
    },
    FlowProfile {
        name: "cloudflare-2019",
        kind: ProfileKind::Reconstruction2019,
        summary: "Cloudflare: BBR over fq, as its 2018 post recommends",
        cc: from(
            "bbr",
            "Cloudflare blog, 2018-10-12: tcp_congestion_control = bbr (its recommendation; v1, the only \
             Linux BBR then)",
        ),
        initial_window: from(10, CDNPLANET_2017),
        pacing: from(true, "Cloudflare blog, 2018-10-12: default_qdisc = fq"),
        not_modelled: "tcp_notsent_lowat = 16384 (Cloudflare blog, 2018-10-12): it changes when a bulk \
                       sender's application writes, not what TCP sends; MSS clamping",
    },
    FlowProfile {
        name: "edgecast-2019",
        kind: ProfileKind::Reconstruction2019,
        summary: "Edgecast (Verizon Digital Media Services) before BBR",
        cc: assumed(
            "cubic",
            "the Linux default; Edgecast was still evaluating BBR v1 at a few PoPs in September 2019 \
             (Verizon Media, BBR Evaluation at a Large CDN)",
        ),
        initial_window: from(30, CDNPLANET_2017),
        pacing: assumed(false, UNPACED_DEFAULT),
        not_modelled: LINUX_DEFAULTS_ELSEWHERE,
    },
    FlowProfile {
        name: "fastly-2019",
        kind: ProfileKind::Reconstruction2019,
        summary: "Fastly: Cubic, its default",
        cc: from(
            "cubic",
            "Fastly VCL reference, client.socket.congestion_algorithm: cubic is the default (a current page, \
             assumed unchanged since 2019)",
        ),
        initial_window: from(10, CDNPLANET_2017),
        pacing: assumed(false, UNPACED_DEFAULT),
        not_modelled: "a customer's VCL may choose bbr or reno per connection; the module parameters",
    },
    FlowProfile {
        name: "google-2019",
        kind: ProfileKind::Reconstruction2019,
        summary: "Google: BBR v1",
        cc: from(
            "bbr",
            "Google Cloud blog, 2017-07-20: BBR powers TCP traffic from google.com and YouTube; v1 (BBRv2 \
             was alpha code from mid-2019, google/bbr)",
        ),
        initial_window: assumed(
            10,
            "no 2019 measurement read; 10 is RFC 6928's, which Google proposed, and CDNPlanet measured 10 \
             for Google's hosting in 2011",
        ),
        pacing: from(true, BBR_PACES),
        not_modelled: LINUX_DEFAULTS_ELSEWHERE,
    },
    FlowProfile {
        name: "linux-default",
        kind: ProfileKind::Generic,
        summary: "Linux as it comes: Cubic, initial window 10, no pacing",
        cc: from("cubic", LINUX_CUBIC),
        initial_window: from(10, LINUX_IW),
        pacing: from(
            false,
            "Linux: the default qdisc (pfifo_fast, or fq_codel by systemd) does not pace, and Cubic does \
             not ask for pacing",
        ),
        not_modelled: "nothing beyond the keys: the other keys' defaults are Linux's",
    },
    FlowProfile {
        name: "cdn-cubic-iw32",
        kind: ProfileKind::Generic,
        summary: "a CDN-tuned Cubic server: initcwnd 32 on its routes",
        cc: from("cubic", LINUX_CUBIC),
        initial_window: assumed(
            32,
            "typical CDN tuning: Akamai 32, Edgecast 30 and CloudFront 25 measured in 2017 (CDNPlanet)",
        ),
        pacing: from(false, "Cubic without fq does not pace (Linux)"),
        not_modelled: "nothing beyond the keys",
    },
    FlowProfile {
        name: "bbr-fq",
        kind: ProfileKind::Generic,
        summary: "a BBR v1 server with fq pacing",
        cc: from("bbr", "Linux net/ipv4/tcp_bbr.c (v1, mainline)"),
        initial_window: from(10, LINUX_IW),
        pacing: from(true, BBR_PACES),
        not_modelled: "fq's per-flow scheduling among a host's flows (TCP's pacing stands in: the same \
                       departure times per flow)",
    },
];

/// The profile called `name`, or an error at `field` listing the profiles.
pub fn profile(name: &str, field: &str) -> Result<&'static FlowProfile, FieldError> {
    PROFILES.iter().find(|p| p.name == name).ok_or_else(|| {
        FieldError::new(
            field,
            format!(
                "unknown profile '{name}'; profiles: {}",
                PROFILES.map(|p| p.name).join(", ")
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_resolves_as_a_group_and_names_a_source_for_each_value() {
        for p in &PROFILES {
            ccfair_cc::CcConfig::from_name_and_params(p.cc.value, &serde_json::json!({}))
                .unwrap_or_else(|e| panic!("{}: {e:?}", p.name));
            for source in [p.cc.source, p.initial_window.source, p.pacing.source] {
                assert!(source.len() > 10, "{}: {source:?}", p.name);
            }
            // BBR paces in ccfair whatever the key says; a profile must not claim otherwise.
            if p.cc.value == "bbr" {
                assert!(p.pacing.value, "{}", p.name);
            }
        }
        let names: std::collections::BTreeSet<_> = PROFILES.iter().map(|p| p.name).collect();
        assert_eq!(names.len(), PROFILES.len(), "names are unique");
    }

    #[test]
    fn the_papers_providers_are_2019_reconstructions_with_their_initial_windows() {
        let iw = |name: &str| profile(name, "f").unwrap().initial_window.value;
        assert_eq!(
            [iw("akamai-a-2019"), iw("akamai-e-2019")],
            [32, 16],
            "AkamaiA and AkamaiE by their initial windows"
        );
        for p in PROFILES.iter().filter(|p| p.name.ends_with("-2019")) {
            assert_eq!(p.kind, ProfileKind::Reconstruction2019, "{}", p.name);
        }
        assert_eq!(profile("google-2019", "f").unwrap().cc.value, "bbr");
        let e = profile("google", "flows[1].profile").unwrap_err();
        assert!(e.says("flows[1].profile", "google-2019"), "{e}");
    }

    fn resolve(flows: serde_json::Value, backend: &crate::Backend) -> Result<crate::Resolution, FieldError> {
        let doc = crate::value::Value::from_json(&serde_json::json!({
            "duration": "10s",
            "link": {"rate": "10Mbps", "buffer": "1bdp"},
            "flows": flows,
        }));
        crate::resolve(crate::Source::Document(&doc), backend)
    }

    fn sim(flows: serde_json::Value) -> Result<crate::Resolution, FieldError> {
        resolve(flows, &crate::Backend::Sim)
    }

    #[test]
    fn a_profile_lies_under_the_groups_own_keys() {
        let r = sim(serde_json::json!([
            {"profile": "akamai-a-2019", "rtt": "50ms"},
            {"profile": "akamai-a-2019", "rtt": "50ms", "initial_window": 4, "pacing": false},
            {"profile": "google-2019", "rtt": "50ms", "cc": "cubic"},
            {"cc": "reno", "rtt": "50ms"},
        ]))
        .unwrap();
        let g = &r.sim_spec.groups;
        assert_eq!(
            (g[0].cc.name(), g[0].initial_window, g[0].pacing),
            ("cubic", 32, true)
        );
        // Keys the group writes win, one by one.
        assert_eq!(
            (g[1].cc.name(), g[1].initial_window, g[1].pacing),
            ("cubic", 4, false)
        );
        assert_eq!(
            (g[2].cc.name(), g[2].initial_window, g[2].pacing),
            ("cubic", 10, true)
        );
        // Without a profile, the document's defaults.
        assert_eq!((g[3].initial_window, g[3].pacing), (10, false));
        assert_eq!(r.input.flows[0].profile.as_deref(), Some("akamai-a-2019"));
        assert_eq!(r.input.flows[3].profile, None);
    }

    #[test]
    fn the_written_document_reads_back_to_the_same_groups_with_the_profile_named() {
        let r = sim(serde_json::json!([{"profile": "edgecast-2019", "rtt": "50ms"}])).unwrap();
        assert_eq!(r.document["flows"][0]["profile"], "edgecast-2019");
        assert_eq!(r.document["flows"][0]["initial_window"], 30);
        let again = resolve(r.document["flows"].clone(), &crate::Backend::Sim).unwrap();
        assert_eq!(again.input.flows, r.input.flows);
        // A group without a profile writes none (its run ids do not move).
        let plain = sim(serde_json::json!([{"cc": "cubic", "rtt": "50ms"}])).unwrap();
        assert!(plain.explicit["flows"][0].get("profile").is_none());
    }

    #[test]
    fn cc_is_required_without_a_profile_and_unknown_profiles_are_named() {
        let e = sim(serde_json::json!([{"rtt": "50ms"}])).err().unwrap();
        assert_eq!(e.field, "flows[0].cc");
        assert!(e.message.starts_with("is required"), "{}", e.message);
        let e = sim(serde_json::json!([{"cc": "cubic", "rtt": "5ms"}, {"profile": "akamai", "rtt": "50ms"}]))
            .err()
            .unwrap();
        assert!(e.says("flows[1].profile", "akamai-a-2019, akamai-e-2019"), "{e}");
    }

    #[test]
    fn the_kernel_backend_applies_a_profile_and_names_it_when_the_module_is_missing() {
        let host = |ccs: &[&str]| {
            crate::Backend::Kernel(crate::kernel::KernelHost {
                available_ccs: ccs.iter().map(|c| c.to_string()).collect(),
            })
        };
        let flows = serde_json::json!([
            {"profile": "linux-default", "rtt": "50ms"},
            {"profile": "amazon-bbr-2019", "rtt": "50ms"},
        ]);
        let r = resolve(flows.clone(), &host(&["reno", "cubic", "bbr"])).unwrap();
        let groups = &r.spec["groups"];
        assert_eq!(groups[1]["cc"]["name"], "bbr");
        assert_eq!(groups[1]["initial_window"], 25);
        assert_eq!(groups[1]["pacing"], true);
        assert_eq!(
            (groups[0]["cc"]["name"].as_str(), groups[0]["pacing"].as_bool()),
            (Some("cubic"), Some(false))
        );
        let e = resolve(flows, &host(&["reno", "cubic"])).err().unwrap();
        assert!(
            e.says(
                "flows[1].cc",
                "flows[1].profile = 'amazon-bbr-2019' sets cc = 'bbr'"
            ),
            "{e}"
        );
    }
}
