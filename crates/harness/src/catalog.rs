//! What each lab is, for a reader: its article (Vietnamese title and an English
//! gloss), section, title, what it shows and how long it usually takes.
//!
//! One source of truth, two plain files a shell can read too:
//! `labs/catalog.tsv` (one line per lab: id, article, section, seconds, title,
//! shows) and `labs/articles.tsv` (one line per article: code, file, title, gloss).
//! `./run.sh list` prints them with `column`; a lab binary compiles them in, so its
//! `--help`, its report header and the HTML report say the same thing.

use serde::{Deserialize, Serialize};

const CATALOG: &str = include_str!("../../../labs/catalog.tsv");
const ARTICLES: &str = include_str!("../../../labs/articles.tsv");

/// One of the four articles the labs come from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Article {
    /// `02`, `05`, `92` or `04`.
    pub code: String,
    /// The seed file in `../shared/seeds/`.
    pub file: String,
    /// The article's own title.
    pub title: String,
    /// The title in English.
    pub gloss: String,
}

/// One lab's line of `labs/catalog.tsv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub id: String,
    pub article: Article,
    /// The section of the article, e.g. `3.2` or `3.1–3.2`.
    pub section: String,
    /// A typical duration on a 2-core machine, in seconds.
    pub seconds: u32,
    pub title: String,
    /// One paragraph: what the lab shows.
    pub shows: String,
}

impl Entry {
    /// `article 05 · Sorted Set và Geo — … (Sorted Set and Geo: …) · section 3.2`.
    pub fn source_line(&self) -> String {
        format!(
            "article {} · {} ({}) · section {}",
            self.article.code, self.article.title, self.article.gloss, self.section
        )
    }
}

fn lines(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').collect())
}

/// Every article, in file order.
pub fn articles() -> Vec<Article> {
    lines(ARTICLES)
        .map(|f| {
            assert_eq!(f.len(), 4, "labs/articles.tsv: 4 tab-separated fields");
            Article {
                code: f[0].into(),
                file: f[1].into(),
                title: f[2].into(),
                gloss: f[3].into(),
            }
        })
        .collect()
}

/// Every lab, in file order.
pub fn entries() -> Vec<Entry> {
    let articles = articles();
    lines(CATALOG)
        .map(|f| {
            assert_eq!(
                f.len(),
                6,
                "labs/catalog.tsv: 6 tab-separated fields: {f:?}"
            );
            let article = articles
                .iter()
                .find(|a| a.code == f[1])
                .unwrap_or_else(|| panic!("labs/catalog.tsv: unknown article {}", f[1]))
                .clone();
            Entry {
                id: f[0].into(),
                article,
                section: f[2].into(),
                seconds: f[3].parse().expect("labs/catalog.tsv: seconds"),
                title: f[4].into(),
                shows: f[5].into(),
            }
        })
        .collect()
}

/// The catalogue entry of `id`. A lab missing from the catalogue is a bug that the
/// catalogue's unit test catches; here it panics with the file to fix.
pub fn entry(id: &str) -> Entry {
    entries()
        .into_iter()
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("lab {id} is missing from labs/catalog.tsv"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lab_directory_is_in_the_catalogue_and_back() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs");
        let mut dirs: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let e = e.ok()?;
                e.file_type()
                    .ok()?
                    .is_dir()
                    .then(|| e.file_name().into_string().ok())?
            })
            .collect();
        dirs.sort();
        let mut ids: Vec<String> = entries().into_iter().map(|e| e.id).collect();
        ids.sort();
        assert_eq!(dirs, ids, "labs/ and labs/catalog.tsv list different labs");
    }

    #[test]
    fn an_entry_names_its_article_by_title() {
        let e = entry("05a-order");
        assert_eq!(e.section, "3.2");
        assert!(e
            .source_line()
            .starts_with("article 05 · Sorted Set và Geo"));
        assert!(e.source_line().ends_with("section 3.2"));
    }
}
