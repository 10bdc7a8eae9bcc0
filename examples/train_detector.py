"""A small detector training script with the patterns ms-lint finds (see README: "Quick start")."""
import argparse

import mindspore as ms
from mindspore import nn, ops, Parameter, Tensor


class FocalLoss(nn.Cell):
    """Per-sample loss written as a Python loop: compiled once per row of the batch."""

    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def construct(self, logits, labels):
        losses = []
        for i in range(logits.shape[0]):
            p = ops.sigmoid(logits[i])
            losses.append(-labels[i] * ops.pow(1 - p, self.gamma) * ops.log(p + 1e-6))
        return ops.stack(losses).mean()


class Detector(nn.Cell):
    def __init__(self, num_layers=3, max_boxes=100):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(16, 16) for _ in range(num_layers)])
        self.head = nn.Dense(16, 4)
        self.max_boxes = 100

    def construct(self, x):
        for layer in self.layers:  # a loop over sub-cells: fine, not flagged
            x = ops.relu(layer(x))
        if x.shape[0] > 1:  # a condition on a shape: folded at compile time, not flagged
            x = x * 1.0
        boxes = self.head(x)
        score = ops.zeros((), ms.float32)
        for _ in range(self.max_boxes):
            score = score + boxes.sum() * 0.01
        return boxes, score


class TrainStep(nn.Cell):
    def __init__(self, network, optimizer):
        super().__init__()
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.grad = ops.GradOperation(get_by_list=True)
        self.step = Parameter(Tensor(0, ms.int32), name="step")

    def construct(self, x, labels):
        loss = self.network(x, labels)
        grads = self.grad(self.network, self.weights)(x, labels)
        grads = tuple([ops.clip_by_value(g, -1.0, 1.0) for g in grads])
        if self.step < 1000:
            loss = loss * 2.0
        self.optimizer(grads)
        return loss


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE)
    net = Detector()
    step = TrainStep(net, nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9))
    for _ in range(args.epochs):
        print(step(ops.ones((4, 16), ms.float32), ops.ones((4, 8), ms.float32)))
