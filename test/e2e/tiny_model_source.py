"""A small conv + linear model as the source of a `tiny.py` file, which mcu-compile loads with
`--model tiny.py:tiny` in tests that run it from another folder or environment."""

SOURCE = '''
import torch

class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 6 * 6, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))

def tiny():
    return Tiny().eval()
'''
