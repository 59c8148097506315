//! Impersonation headers (`Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`, `Impersonate-Extra-*`)
//! read as kube-apiserver's impersonation filter reads them. The one requester of the in-memory server is in
//! `system:masters`, which kube-apiserver's authorizer allows to impersonate anyone, so every request is
//! granted.

use std::collections::BTreeMap;

use http::HeaderMap;

use crate::error::ApiError;

use super::user::{UserInfo, requester};

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA: &str = "impersonate-extra-";

/// The user a request acts as: the impersonated one when the headers ask for one, else the requester.
/// A group, extra or uid without a user is refused with kube-apiserver's 400.
pub(crate) fn acting_user(headers: &HeaderMap) -> Result<UserInfo, ApiError> {
    let value = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect()
    };
    let name = value(USER).into_iter().next().unwrap_or_default();
    let groups = value(GROUP);
    let uid = value(UID).into_iter().next().unwrap_or_default();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Go's headers come in a map; the refusal lists extras in header order here.
    let mut refs = Vec::new();
    if !name.is_empty() {
        refs.push(match service_account(&name) {
            Some((ns, sa)) => reference("ServiceAccount", ns, sa, "", ""),
            None => reference("User", "", &name, "", ""),
        });
    }
    refs.extend(groups.iter().map(|g| reference("Group", "", g, "", "")));
    for (header, v) in headers {
        let Some(key) = header.as_str().strip_prefix(EXTRA) else {
            continue;
        };
        let key = percent_decode(key);
        if let Ok(v) = v.to_str() {
            refs.push(reference(
                "UserExtra",
                "",
                v,
                "authentication.k8s.io/v1",
                &key,
            ));
            extra.entry(key).or_default().push(v.to_string());
        }
    }
    if !uid.is_empty() {
        refs.push(reference("UID", "", &uid, "authentication.k8s.io/v1", ""));
    }
    if name.is_empty() {
        if refs.is_empty() {
            return Ok(requester());
        }
        return Err(ApiError::bad_request(format!(
            "requested [{}] without impersonating a user",
            refs.join(" ")
        )));
    }
    let mut groups = groups;
    if groups.is_empty()
        && let Some((ns, _)) = service_account(&name)
    {
        groups = vec![
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{ns}"),
        ];
    }
    if name == "system:anonymous" {
        if !groups.iter().any(|g| g == "system:unauthenticated") {
            groups.push("system:unauthenticated".into());
        }
    } else if !groups
        .iter()
        .any(|g| g == "system:authenticated" || g == "system:unauthenticated")
    {
        groups.push("system:authenticated".into());
    }
    Ok(UserInfo {
        name,
        uid,
        groups,
        extra,
    })
}

/// Go's `%v` of a `v1.ObjectReference` with these fields set.
fn reference(kind: &str, namespace: &str, name: &str, api_version: &str, field: &str) -> String {
    format!("{{{kind} {namespace} {name}  {api_version}  {field}}}")
}

/// `serviceaccount.SplitUsername`: `system:serviceaccount:NS:NAME`.
fn service_account(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("system:serviceaccount:")?;
    let (ns, sa) = rest.split_once(':')?;
    (!ns.is_empty() && !sa.is_empty() && !sa.contains(':')).then_some((ns, sa))
}

/// `unescapeExtraKey`: the key is URL path-unescaped, as written by client-go.
fn percent_decode(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = key
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| key.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn impersonated_users_get_groups_as_kube_apiserver_gives_them() {
        let u = acting_user(&headers(&[])).unwrap();
        assert_eq!(u, requester());
        let u = acting_user(&headers(&[("Impersonate-User", "noxu")])).unwrap();
        assert_eq!(u.groups, ["system:authenticated"]);
        let u = acting_user(&headers(&[
            ("Impersonate-User", "noxu"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Group", "system:authenticated"),
        ]))
        .unwrap();
        assert_eq!(u.groups, ["ops", "system:authenticated"]);
        let u = acting_user(&headers(&[(
            "Impersonate-User",
            "system:serviceaccount:kube-system:builder",
        )]))
        .unwrap();
        assert_eq!(
            u.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:kube-system",
                "system:authenticated"
            ]
        );
        let u = acting_user(&headers(&[("Impersonate-User", "system:anonymous")])).unwrap();
        assert_eq!(u.groups, ["system:unauthenticated"]);
        let e = acting_user(&headers(&[("Impersonate-Group", "ops")])).unwrap_err();
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "requested [{Group  ops    }] without impersonating a user"
        );
    }
}
