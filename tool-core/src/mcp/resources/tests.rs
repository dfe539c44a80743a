//! Tests of templates, URI checks and registrations.

use super::uri::percent_encode_path;
use super::*;
use crate::content::ResourceBody;
use crate::mcp::completion::Completer;

fn echo(m: &TemplateMatch<'_>) -> Result<ResourceBody, ResourceError> {
    Ok(ResourceBody::Text(format!("{:?}", m.vars)))
}

#[test]
fn templates_match_simple_expressions_and_refuse_the_rest() {
    let t = ResourceTemplate::new("test://template/{id}/data", "t", echo).expect("valid");
    let vars = t.matches("test://template/123/data").expect("matches");
    assert_eq!(vars["id"], "123");
    assert_eq!(
        t.matches("test://template/a%20b/data").expect("decoded")["id"],
        "a b"
    );
    for uri in [
        "test://template//data",
        "test://template/1/2/data",
        "test://template/a%2Fb/data",
        "test://template/%ZZ/data",
        "test://template/1/datax",
        "test://other/1/data",
    ] {
        assert!(t.matches(uri).is_none(), "{uri} must not match");
    }
    for bad in [
        "test://{+path}",
        "test://{a}{b}",
        "test://{a}/{a}",
        "test://{a",
        "test://a}",
        "test://fixed",
        "no scheme {a}",
    ] {
        assert!(
            ResourceTemplate::new(bad, "t", echo).is_err(),
            "{bad} must be refused"
        );
    }
}

#[test]
fn uris_are_checked_and_file_uris_decoded() {
    assert!(check_uri("test://static-text").is_ok());
    for bad in ["", "no-scheme", "1x://a", "test://a b", "test://a\nb"] {
        assert!(check_uri(bad).is_err(), "{bad:?}");
    }
    assert!(check_uri(&format!("x:{}", "a".repeat(MAX_URI_LEN))).is_err());
    assert_eq!(
        WorkspaceResources::path_of("file:///ws/a%20b.txt").expect("decoded"),
        "/ws/a b.txt"
    );
    assert_eq!(
        WorkspaceResources::path_of("file://localhost/ws/a").expect("local"),
        "/ws/a"
    );
    for bad in [
        "file://host/ws/a",
        "file:ws/a",
        "file:///ws/a?x=1",
        "file:///ws/a#f",
        "file:///ws/%00",
        "file:///ws/%C3",
    ] {
        assert!(WorkspaceResources::path_of(bad).is_err(), "{bad}");
    }
    assert_eq!(percent_encode_path("/a b/ü"), "/a%20b/%C3%BC");
}

#[test]
fn registrations_refuse_duplicates_and_file_uris() {
    let r = Resources::new()
        .with_resource(Resource::text("test://a", "a", "x"))
        .expect("first");
    assert!(r
        .clone()
        .with_resource(Resource::text("test://a", "a", "y"))
        .is_err());
    assert!(r
        .clone()
        .with_resource(Resource::text("file:///etc/passwd", "p", "y"))
        .is_err());
    let t = ResourceTemplate::new("test://t/{x}", "t", echo).expect("valid");
    let r = r.with_template(t.clone()).expect("template");
    assert!(r.clone().with_template(t.clone()).is_err());
    assert!(t
        .with_completer("nope", Completer::from_values(["a"]))
        .is_err());
    assert!(matches!(
        r.read("test://missing"),
        Err(ResourceError::NotFound { .. })
    ));
    assert!(matches!(
        r.read("file:///anything"),
        Err(ResourceError::NotFound { .. })
    ));
}
