//! What each route works on: a retrieved document's structure tree, the
//! content nodes its retrieved chunks cover, and which chunk holds each
//! node. A document removed or rewritten since retrieval cannot be routed;
//! it keeps its retrieved chunks and says why.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::{MethodContext, MethodError, Passage};
use folio_documents::structure_tree::StructureTree;

pub struct Unit {
    pub path: String,
    /// Numbers of the retrieved passages routed here.
    pub retrieved: Vec<usize>,
    pub routable: Result<Routable, String>,
}

/// The tree and node map are shared by every unit of one document (the
/// `no-structure` variant makes one unit per passage).
pub struct Routable {
    pub tree: Arc<StructureTree>,
    pub hits: BTreeSet<usize>,
    /// The chunk that holds each content node (the first, for a node split
    /// over several).
    pub node_chunk: Arc<BTreeMap<usize, i64>>,
}

/// One unit per document in the order retrieval first found it, or, with
/// `per_passage`, one per retrieved passage.
pub async fn units(
    ctx: &MethodContext<'_>,
    retrieved: &[Passage],
    per_passage: bool,
) -> Result<Vec<Unit>, MethodError> {
    let mut groups: Vec<(String, Vec<&Passage>)> = Vec::new();
    for p in retrieved {
        match groups
            .iter_mut()
            .find(|(path, _)| !per_passage && *path == p.path)
        {
            Some((_, group)) => group.push(p),
            None => groups.push((p.path.clone(), vec![p])),
        }
    }
    let mut documents: BTreeMap<String, Result<Document, String>> = BTreeMap::new();
    let mut units = Vec::with_capacity(groups.len());
    for (path, passages) in groups {
        if !documents.contains_key(&path) {
            documents.insert(path.clone(), document(ctx, &path).await?);
        }
        let routable = match &documents[&path] {
            Ok(doc) => doc.routable(&passages),
            Err(why) => Err(why.clone()),
        };
        units.push(Unit {
            path,
            retrieved: passages.iter().map(|p| p.number).collect(),
            routable,
        });
    }
    Ok(units)
}

struct Document {
    tree: Arc<StructureTree>,
    chunk_nodes: BTreeMap<i64, Vec<usize>>,
    node_chunk: Arc<BTreeMap<usize, i64>>,
}

async fn document(
    ctx: &MethodContext<'_>,
    path: &str,
) -> Result<Result<Document, String>, MethodError> {
    let Some(parts) = ctx.document(path).await? else {
        return Ok(Err("the document was removed after it was retrieved".into()));
    };
    let mut chunk_nodes = BTreeMap::new();
    for chunk in parts.chunks {
        let nodes: Vec<usize> = serde_json::from_str(&chunk.node_ordinals).unwrap_or_default();
        chunk_nodes.insert(chunk.id, nodes);
    }
    let mut node_chunk = BTreeMap::new();
    for (&chunk, nodes) in &chunk_nodes {
        for &node in nodes {
            node_chunk.entry(node).or_insert(chunk);
        }
    }
    Ok(Ok(Document {
        tree: Arc::new(parts.tree),
        chunk_nodes,
        node_chunk: Arc::new(node_chunk),
    }))
}

impl Document {
    fn routable(&self, passages: &[&Passage]) -> Result<Routable, String> {
        let mut hits = BTreeSet::new();
        for p in passages {
            let nodes = self
                .chunk_nodes
                .get(&p.chunk_id)
                .filter(|nodes| !nodes.is_empty() && nodes.iter().all(|&n| n < self.tree.len()))
                .ok_or("the document changed after it was retrieved")?;
            hits.extend(nodes.iter().copied());
        }
        Ok(Routable {
            tree: Arc::clone(&self.tree),
            hits,
            node_chunk: Arc::clone(&self.node_chunk),
        })
    }
}
