"""The CLAX model of each rankwise click-model name, as source text for the benchmarks' CLAX
child processes (which run in CLAX's own environment): ``clax_model(kind, pairs, ranks)``."""

BUILD = '''
def clax_model(kind, pairs, ranks):
    import clax
    from flax import nnx

    rngs = nnx.Rngs(0)
    make = {"pbm": lambda: clax.PositionBasedModel(query_doc_pairs=pairs, positions=ranks + 1, rngs=rngs),
            "ubm": lambda: clax.UserBrowsingModel(query_doc_pairs=pairs, positions=ranks + 1, rngs=rngs),
            "dbn": lambda: clax.DynamicBayesianNetwork(query_doc_pairs=pairs, rngs=rngs),
            "sdbn": lambda: clax.DynamicBayesianNetwork(query_doc_pairs=pairs, fix_continuation=True, rngs=rngs),
            "ccm": lambda: clax.ClickChainModel(query_doc_pairs=pairs, rngs=rngs),
            "dcm": lambda: clax.DependentClickModel(query_doc_pairs=pairs, positions=ranks + 1, rngs=rngs),
            "cascade": lambda: clax.CascadeModel(query_doc_pairs=pairs, rngs=rngs)}
    return make[kind]()
'''
