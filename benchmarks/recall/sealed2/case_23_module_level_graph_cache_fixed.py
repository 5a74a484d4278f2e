# Fixed twin of case 23: the graph cache is off unless asked for (cache=False), as the reporter disallowed it.
# Thread: https://github.com/chemprop/chemprop/issues/32
# Reported: host RAM (not GPU memory) grows with the number of inferences until it is exhausted.
# Confirmed cause: the reporter found that the featurization cache
#   `if cache: SMILES_TO_GRAPH[d.smiles] = mol_graph` filled RAM (every new molecule adds a graph that
#   is never evicted); disabling the cache fixed it, and the maintainer acknowledged it ("glad you
#   found that").
# Class: an unbounded module-level cache of per-sample featurized objects, filled during inference
import numpy as np
import torch
from rdkit import Chem

SMILES_TO_GRAPH = {}


class MolGraph:
    def __init__(self, smiles):
        mol = Chem.MolFromSmiles(smiles)
        self.f_atoms = [[a.GetAtomicNum(), a.GetDegree(), a.GetFormalCharge(), int(a.GetIsAromatic())]
                        for a in mol.GetAtoms()]
        self.f_bonds, self.edges = [], []
        for bond in mol.GetBonds():
            a1, a2 = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
            feat = [bond.GetBondTypeAsDouble(), int(bond.IsInRing())]
            self.f_bonds += [self.f_atoms[a1] + feat, self.f_atoms[a2] + feat]
            self.edges += [(a1, a2), (a2, a1)]


class BatchMolGraph:
    def __init__(self, mol_graphs):
        self.f_atoms = torch.tensor(np.concatenate([g.f_atoms for g in mol_graphs]), dtype=torch.float)
        self.n_atoms = [len(g.f_atoms) for g in mol_graphs]
        self.f_bonds = [g.f_bonds for g in mol_graphs]
        self.edges = [g.edges for g in mol_graphs]


def mol2graph(smiles_batch, cache=False):
    mol_graphs = []
    for smiles in smiles_batch:
        if smiles in SMILES_TO_GRAPH:
            mol_graph = SMILES_TO_GRAPH[smiles]
        else:
            mol_graph = MolGraph(smiles)
            if cache:
                SMILES_TO_GRAPH[smiles] = mol_graph
        mol_graphs.append(mol_graph)
    return BatchMolGraph(mol_graphs)


def predict(model, smiles_stream, batch_size=50, device="cuda"):
    model.eval()
    preds = []
    with torch.no_grad():
        batch = []
        for smiles in smiles_stream:
            batch.append(smiles)
            if len(batch) == batch_size:
                preds.extend(model(mol2graph(batch)).cpu().tolist())
                batch = []
        if batch:
            preds.extend(model(mol2graph(batch)).cpu().tolist())
    return preds
