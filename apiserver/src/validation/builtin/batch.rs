//! The `batch` group's rules (`pkg/apis/batch/validation`): a Job's template and its restart policy
//! (`OnFailure` or `Never`), and what never changes once the Job exists: its selector, its template (but
//! for the scheduling directives of a Job suspended before it started), completion mode, pod failure
//! policy, backoff limit per index, `managedBy` and success policy.

use serde_json::Value;

use super::core::{pod_template, strip_nulls};
use super::field::{Errors, FieldError, go_json};
use super::meta;
use crate::selector::LabelSelector;

const IMMUTABLE: &str = "field is immutable";

/// `ValidateJob`.
pub(super) fn job(obj: &Value) -> Errors {
    let mut errs = meta::object(obj);
    errs.extend(generated_selector(obj, true));
    errs.extend(job_spec(&obj["spec"], "spec"));
    errs
}

/// `validateGeneratedSelector`: unless `manualSelector`, the template has the labels the server generated
/// (the `batch.kubernetes.io/` ones with `prefixed`: on create, and on update when the stored template has
/// them) and the selector selects them.
fn generated_selector(obj: &Value, prefixed: bool) -> Errors {
    let mut errs = Errors::new();
    let spec = &obj["spec"];
    if spec["manualSelector"] == true || spec["selector"].is_null() {
        return errs;
    }
    let uid = obj["metadata"]["uid"].as_str().unwrap_or("");
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    if uid.is_empty() {
        errs.push(FieldError::required("metadata.uid", ""));
    }
    let labels = &spec["template"]["metadata"]["labels"];
    let mut expected = serde_json::Map::new();
    for (key, value) in [
        ("controller-uid", uid),
        ("job-name", name),
        ("batch.kubernetes.io/controller-uid", uid),
        ("batch.kubernetes.io/job-name", name),
    ] {
        if !prefixed && key.starts_with("batch.kubernetes.io/") {
            continue;
        }
        let path = format!("spec.template.metadata.labels[{key}]");
        match labels[key].as_str() {
            None => errs.push(FieldError::required(path, format!("must be '{value}'"))),
            Some(actual) if actual != value => errs.push(FieldError::invalid_printed(
                path,
                go_json(labels),
                format!("must be '{value}'"),
            )),
            Some(_) => {}
        }
        expected.insert(key.into(), Value::String(value.into()));
    }
    if LabelSelector::from_label_selector(&spec["selector"])
        .is_ok_and(|s| !s.matches(Some(&expected)))
    {
        errs.push(FieldError::invalid_printed(
            "spec.selector",
            meta::selector_json(&spec["selector"]),
            "`selector` not auto-generated",
        ));
    }
    errs
}

/// `ValidateJobUpdate`.
pub(super) fn job_update(obj: &Value, old: &Value) -> Errors {
    let (spec, old_spec) = (&obj["spec"], &old["spec"]);
    // The strategy runs `ValidateJob` (the prefixed labels required if the stored template has them), then
    // `ValidateJobUpdate`, which checks the spec again: a broken spec rule is reported twice.
    let old_labels = &old_spec["template"]["metadata"]["labels"];
    let prefixed = !old_labels["batch.kubernetes.io/job-name"].is_null()
        && !old_labels["batch.kubernetes.io/controller-uid"].is_null();
    let mut errs = meta::object(obj);
    errs.extend(generated_selector(obj, prefixed));
    errs.extend(job_spec(spec, "spec"));
    errs.extend(meta::object_update(obj));
    errs.extend(job_spec(spec, "spec"));
    let immutable = |field: &str| {
        let (new, before) = (
            strip_nulls(spec[field].clone()),
            strip_nulls(old_spec[field].clone()),
        );
        (new != before).then(|| {
            let printed = if field == "selector" {
                super::meta::selector_json(&spec[field])
            } else {
                go_json(&spec[field])
            };
            FieldError::invalid_printed(format!("spec.{field}"), printed, IMMUTABLE)
        })
    };
    if spec["completionMode"] != "Indexed" {
        errs.extend(immutable("completions"));
    }
    errs.extend(immutable("selector"));
    let mut old_template = old_spec["template"].clone();
    let suspended = old_spec["suspend"].as_bool() == Some(true);
    let started = old["status"]["startTime"].is_string();
    if suspended && !started {
        // The scheduling directives of a Job suspended before it started may change.
        let template = &spec["template"];
        old_template["metadata"]["labels"] = template["metadata"]["labels"].clone();
        old_template["metadata"]["annotations"] = template["metadata"]["annotations"].clone();
        for field in ["nodeSelector", "tolerations", "schedulingGates"] {
            old_template["spec"][field] = template["spec"][field].clone();
        }
        let node_affinity = template["spec"]["affinity"]["nodeAffinity"].clone();
        if old_template["spec"]["affinity"].is_object() || !node_affinity.is_null() {
            old_template["spec"]["affinity"]["nodeAffinity"] = node_affinity;
        }
    }
    let without_empty = |v: Value| drop_empty_objects(strip_nulls(v));
    if without_empty(spec["template"].clone()) != without_empty(old_template) {
        errs.push(FieldError::invalid_printed(
            "spec.template",
            go_json(&spec["template"]),
            IMMUTABLE,
        ));
    }
    for field in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        errs.extend(immutable(field));
    }
    errs
}

/// Drops members that are empty objects (`affinity: {}` left after clearing its node affinity).
fn drop_empty_objects(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (k, drop_empty_objects(v)))
                .filter(|(_, v)| !v.as_object().is_some_and(|o| o.is_empty()))
                .collect(),
        ),
        other => other,
    }
}

/// `ValidateJobSpec`: the template (with the Job's restart policies), then the selector (required: generated on
/// create unless `manualSelector`) and whether it matches the template's labels.
fn job_spec(spec: &Value, path: &str) -> Errors {
    let mut errs = job_template_spec(spec, path);
    let selector = &spec["selector"];
    if selector.is_null() {
        errs.push(FieldError::required(format!("{path}.selector"), ""));
    } else {
        errs.extend(super::meta::label_selector(
            selector,
            &format!("{path}.selector"),
        ));
    }
    // A missing selector selects nothing (`LabelSelectorAsSelector(nil)`), so it does not match either.
    if selector.is_null()
        || LabelSelector::from_label_selector(selector)
            .is_ok_and(|s| !s.matches(spec["template"]["metadata"]["labels"].as_object()))
    {
        errs.push(FieldError::invalid_printed(
            format!("{path}.template.metadata.labels"),
            go_json(&spec["template"]["metadata"]["labels"]),
            "`selector` does not match template `labels`",
        ));
    }
    errs
}

/// `validateJobSpec`: the pod template and the restart policy a Job allows.
fn job_template_spec(spec: &Value, path: &str) -> Errors {
    let template_path = format!("{path}.template");
    let mut errs = pod_template(&spec["template"], &template_path);
    let policy_path = format!("{template_path}.spec.restartPolicy");
    match spec["template"]["spec"]["restartPolicy"]
        .as_str()
        .unwrap_or("")
    {
        "Always" | "" => errs.push(FieldError::required(
            policy_path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" | "Never" => {}
        other => errs.push(FieldError::not_supported(
            policy_path,
            other,
            &["OnFailure", "Never"],
        )),
    }
    errs
}

/// `ValidateCronJobCreate`: the schedule, the job template's pod template and restart policy, the name's length.
pub(super) fn cron_job(obj: &Value) -> Errors {
    let mut errs = meta::object(obj);
    errs.extend(schedule(&obj["spec"], None));
    errs.extend(time_zone(&obj["spec"], None));
    errs.extend(job_template_spec(
        &obj["spec"]["jobTemplate"]["spec"],
        "spec.jobTemplate.spec",
    ));
    // The Jobs' names get an 11-character suffix and must stay DNS-1035 labels.
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    if name.len() > 52 {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be no more than 52 characters",
        ));
    }
    errs
}

/// `ValidateCronJobUpdate`: the schedule and the job template.
pub(super) fn cron_job_update(obj: &Value, old: &Value) -> Errors {
    let mut errs = meta::object_update(obj);
    errs.extend(schedule(&obj["spec"], Some(&old["spec"])));
    errs.extend(time_zone(&obj["spec"], Some(&old["spec"])));
    errs.extend(job_template_spec(
        &obj["spec"]["jobTemplate"]["spec"],
        "spec.jobTemplate.spec",
    ));
    errs
}

/// `validateScheduleFormat`: the schedule as robfig/cron's standard parser reads it (five fields or a
/// descriptor), without `TZ=` or `CRON_TZ=` (on create, or when the old schedule had none).
fn schedule(spec: &Value, old_spec: Option<&Value>) -> Errors {
    let mut errs = Errors::new();
    let path = "spec.schedule";
    let schedule = spec["schedule"].as_str().unwrap_or("");
    if schedule.is_empty() {
        errs.push(FieldError::required(path, ""));
        return errs;
    }
    if let Err(why) = cron::parse_standard(schedule) {
        errs.push(FieldError::invalid(path, schedule, why));
    }
    let allow_tz = old_spec.is_some_and(|o| o["schedule"].as_str().unwrap_or("").contains("TZ"));
    if schedule.contains("TZ") {
        if !allow_tz {
            errs.push(FieldError::invalid(
                path,
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        } else if !spec["timeZone"].is_null() {
            errs.push(FieldError::invalid(
                path,
                schedule,
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ));
        }
    }
    errs
}

/// `validateTimeZone` (on create, or when the time zone changed): a name of the IANA time zone database.
fn time_zone(spec: &Value, old_spec: Option<&Value>) -> Errors {
    let mut errs = Errors::new();
    let path = "spec.timeZone";
    let Some(tz) = spec["timeZone"].as_str() else {
        return errs;
    };
    if old_spec.is_some_and(|o| o["timeZone"] == spec["timeZone"]) {
        return errs;
    }
    if tz.is_empty() {
        errs.push(FieldError::invalid(
            path,
            tz,
            "timeZone must be nil or non-empty string",
        ));
        return errs;
    }
    let part_ok = |p: &str| {
        p != "."
            && p != ".."
            && !p.starts_with('-')
            && (1..=14).contains(&p.len())
            && p.bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'+'))
    };
    let unknown = format!("unknown time zone {tz}");
    if !tz.split('/').all(part_ok) {
        errs.push(FieldError::invalid(path, tz, unknown));
        return errs;
    }
    if tz.eq_ignore_ascii_case("Local") {
        errs.push(FieldError::invalid(
            path,
            tz,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    // Go's `time.LoadLocation`: "UTC", "Local" and the names of the time zone database (kube-apiserver's
    // own copy; here the system's).
    if tz != "UTC" && tz != "Local" && jiff::tz::TimeZone::get(tz).is_err() {
        errs.push(FieldError::invalid(path, tz, unknown));
    }
    errs
}

/// robfig/cron v3's `ParseStandard`, for its errors.
mod cron {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

    struct Bounds {
        min: u64,
        max: u64,
        names: &'static [&'static str],
        /// The number of the first name.
        first: u64,
    }

    const FIELDS: [Bounds; 5] = [
        Bounds {
            min: 0,
            max: 59,
            names: &[],
            first: 0,
        },
        Bounds {
            min: 0,
            max: 23,
            names: &[],
            first: 0,
        },
        Bounds {
            min: 1,
            max: 31,
            names: &[],
            first: 0,
        },
        Bounds {
            min: 1,
            max: 12,
            names: &MONTHS,
            first: 1,
        },
        Bounds {
            min: 0,
            max: 6,
            names: &DAYS,
            first: 0,
        },
    ];

    /// The error robfig/cron gives for `spec`, if any.
    pub(super) fn parse_standard(spec: &str) -> Result<(), String> {
        if spec.is_empty() {
            return Err("empty spec string".into());
        }
        let mut spec = spec;
        if (spec.starts_with("TZ=") || spec.starts_with("CRON_TZ="))
            && let Some(i) = spec.find(' ')
        {
            spec = spec[i..].trim();
        }
        if let Some(descriptor) = spec.strip_prefix('@') {
            return parse_descriptor(descriptor, spec);
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!(
                "expected exactly 5 fields, found {}: [{}]",
                fields.len(),
                fields.join(" ")
            ));
        }
        for (field, bounds) in fields.iter().zip(&FIELDS) {
            for expr in field.split(',').filter(|e| !e.is_empty()) {
                range(expr, bounds)?;
            }
        }
        Ok(())
    }

    fn parse_descriptor(descriptor: &str, spec: &str) -> Result<(), String> {
        match descriptor {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => {
                Ok(())
            }
            _ => match descriptor.strip_prefix("every ") {
                Some(duration) if is_go_duration(duration) => Ok(()),
                Some(duration) => Err(format!(
                    "failed to parse duration {spec}: time: invalid duration {}",
                    super::super::field::go_quote(duration)
                )),
                None => Err(format!("unrecognized descriptor: {spec}")),
            },
        }
    }

    /// Go's `time.ParseDuration` accepting `duration` (a signed run of numbers with units).
    fn is_go_duration(duration: &str) -> bool {
        let s = duration.strip_prefix(['+', '-']).unwrap_or(duration);
        if s == "0" {
            return true;
        }
        let mut rest = s;
        if rest.is_empty() {
            return false;
        }
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let number = &rest[..digits];
            if number.is_empty() || number == "." || number.matches('.').count() > 1 {
                return false;
            }
            rest = &rest[digits..];
            let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
                .iter()
                .find(|u| rest.starts_with(*u));
            match unit {
                Some(u) => rest = &rest[u.len()..],
                None => return false,
            }
        }
        true
    }

    fn range(expr: &str, r: &Bounds) -> Result<(), String> {
        let range_and_step: Vec<&str> = expr.split('/').collect();
        let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
        let single = low_and_high.len() == 1;
        let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
            (r.min, r.max)
        } else {
            let start = int_or_name(low_and_high[0], r)?;
            let end = match low_and_high.len() {
                1 => start,
                2 => int_or_name(low_and_high[1], r)?,
                _ => return Err(format!("too many hyphens: {expr}")),
            };
            (start, end)
        };
        let step = match range_and_step.len() {
            1 => 1,
            2 => {
                let step = int(range_and_step[1])?;
                if single {
                    end = r.max;
                }
                step
            }
            _ => return Err(format!("too many slashes: {expr}")),
        };
        if start < r.min {
            return Err(format!(
                "beginning of range ({start}) below minimum ({}): {expr}",
                r.min
            ));
        }
        if end > r.max {
            return Err(format!(
                "end of range ({end}) above maximum ({}): {expr}",
                r.max
            ));
        }
        if start > end {
            return Err(format!(
                "beginning of range ({start}) beyond end of range ({end}): {expr}"
            ));
        }
        if step == 0 {
            return Err(format!("step of range should be a positive number: {expr}"));
        }
        Ok(())
    }

    fn int_or_name(expr: &str, r: &Bounds) -> Result<u64, String> {
        let lower = expr.to_lowercase();
        if let Some(i) = r.names.iter().position(|n| *n == lower) {
            return Ok(r.first + i as u64);
        }
        int(expr)
    }

    /// `mustParseInt`: `strconv.Atoi`, not negative.
    fn int(expr: &str) -> Result<u64, String> {
        let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "failed to parse int from {expr}: strconv.Atoi: parsing {}: invalid syntax",
                super::super::field::go_quote(expr)
            ));
        }
        let Ok(n) = expr.parse::<i64>() else {
            return Err(format!(
                "failed to parse int from {expr}: strconv.Atoi: parsing {}: value out of range",
                super::super::field::go_quote(expr)
            ));
        };
        u64::try_from(n).map_err(|_| format!("negative number ({n}) not allowed: {expr}"))
    }

    #[cfg(test)]
    mod tests {
        use super::parse_standard;

        #[test]
        fn robfig_errors() {
            assert!(parse_standard("*/5 * * * *").is_ok());
            assert!(parse_standard("0 0 * JAN-mar sun").is_ok());
            assert!(parse_standard("@every 1h30m").is_ok());
            assert_eq!(
                parse_standard("* * *").unwrap_err(),
                "expected exactly 5 fields, found 3: [* * *]"
            );
            assert_eq!(
                parse_standard("61 * * * *").unwrap_err(),
                "end of range (61) above maximum (59): 61"
            );
            assert_eq!(
                parse_standard("x * * * *").unwrap_err(),
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"
            );
            assert_eq!(
                parse_standard("@often").unwrap_err(),
                "unrecognized descriptor: @often"
            );
        }
    }
}
