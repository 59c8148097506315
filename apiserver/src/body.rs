//! Response bodies: a whole JSON document, or a watch stream of JSON lines.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use super::watch::WatchStream;

/// The body of a response from the in-memory server.
#[derive(Debug)]
pub struct ResponseBody {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Full(Option<Bytes>),
    Watch(Box<WatchStream>),
}

impl ResponseBody {
    /// A body with all its bytes.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        Self {
            kind: Kind::Full(Some(bytes.into())),
        }
    }

    /// An empty body.
    pub fn empty() -> Self {
        Self {
            kind: Kind::Full(None),
        }
    }

    pub(crate) fn watch(stream: WatchStream) -> Self {
        Self {
            kind: Kind::Watch(Box::new(stream)),
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Watch(stream) => stream.poll_next(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(&self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Watch(_) => SizeHint::default(),
        }
    }
}
