# Fixed twin of case 11: run the whole evaluation loop under `with torch.no_grad():`
# Thread: https://github.com/XiaoYee/emotion_classification/issues/3
# Reported: training works, but evaluation of VGG_GRU runs out of GPU memory even with one sample (16 frames x 3 x 224 x 224) per batch
# Confirmed cause: the reporter found it after fixing: autograd is still on in eval() (volatile no longer disables it), so every clip's output_feature and its graph are kept until the mean over clips; adding `with torch.no_grad():` before the test loop made it work
# Class: evaluation without no_grad (per-sample clip outputs kept with their graphs)
import torch
from torch.autograd import Variable


best_accuracy = 0.0


def evaluate(epoch, model, test_loader, metric, backupdir="weight"):
    global best_accuracy
    model.eval()
    metric.reset()

    with torch.no_grad():
        for batch_idx, (data, label) in enumerate(test_loader):
            data = data.squeeze(0)
            num_clips = data.size(0)
            data = Variable(data, volatile=True).cuda()
            label = Variable(label.long(), volatile=True).cuda().squeeze(1)

            output = []
            for clip_index in range(num_clips):
                output_feature = model(data[clip_index])
                output.append(output_feature)
            output = torch.mean(torch.cat(output), 0, keepdim=True)
            metric(output, label)

    accuracy = metric.value()
    if accuracy >= best_accuracy:
        best_accuracy = accuracy
        torch.save(model.state_dict(), "%s/model_%d.pkl" % (backupdir, epoch))
    print("test accuracy: %f (best %f)" % (accuracy, best_accuracy))
    return accuracy
