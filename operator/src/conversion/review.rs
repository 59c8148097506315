//! One ConversionReview in, one out: every object converted to the desired version through the hub, or the
//! whole review failed with the first object that could not be, by name.

use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde_json::Value;

use super::{VersionKind, Versions};

/// The conversion of one kind without the kind's type: what the webhook server and the CRD installation
/// need.
pub trait ErasedConversion: Send + Sync {
    /// The kind's API group.
    fn group(&self) -> String;
    /// The kind's plural resource name.
    fn plural(&self) -> String;
    /// The CRD's name, `PLURAL.GROUP`.
    fn crd_name(&self) -> String {
        format!("{}.{}", self.plural(), self.group())
    }
    /// Where the webhook server answers this kind's ConversionReviews: `/convert/GROUP/PLURAL`.
    fn path(&self) -> String {
        format!("/convert/{}/{}", self.group(), self.plural())
    }
    /// Answers the ConversionReview `body` (JSON) with a ConversionReview (JSON).
    fn review(&self, body: &[u8]) -> Vec<u8>;
}

impl<Hub: VersionKind> ErasedConversion for Versions<Hub>
where
    Versions<Hub>: Send + Sync,
{
    fn group(&self) -> String {
        Hub::group(&()).into_owned()
    }

    fn plural(&self) -> String {
        Hub::plural(&()).into_owned()
    }

    fn review(&self, body: &[u8]) -> Vec<u8> {
        let response = match serde_json::from_slice::<ConversionReview>(body)
            .map_err(|e| e.to_string())
            .and_then(|r| ConversionRequest::try_from(r).map_err(|e| e.to_string()))
        {
            Ok(request) => self.answer(request),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read a ConversionReview");
                ConversionResponse::invalid(Status::failure(
                    &format!("cannot read the ConversionReview: {e}"),
                    "BadRequest",
                ))
            }
        };
        serde_json::to_vec(&response.into_review()).unwrap_or_default()
    }
}

impl<Hub: VersionKind> Versions<Hub> {
    /// The response to one request: every object converted in order, or a failure naming the first object
    /// that could not be converted and why.
    fn answer(&self, request: ConversionRequest) -> ConversionResponse {
        let desired = request.desired_api_version.clone();
        let objects = request.objects.clone();
        let response = ConversionResponse::for_request(request);
        let mut converted = Vec::with_capacity(objects.len());
        for object in objects {
            let name = object_name(&object);
            match self.convert(object, &desired) {
                Ok(c) => converted.push(c),
                Err(e) => {
                    tracing::warn!(object = %name, %desired, error = %e, "conversion failed");
                    return response.failure(Status::failure(&format!("{name}: {e}"), "Invalid"));
                }
            }
        }
        response.success(converted)
    }
}

/// `NAMESPACE/NAME` (or `NAME`) of an object in a review.
fn object_name(object: &Value) -> String {
    let meta = &object["metadata"];
    let name = meta["name"].as_str().unwrap_or_default();
    match meta["namespace"].as_str().filter(|n| !n.is_empty()) {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    }
}
